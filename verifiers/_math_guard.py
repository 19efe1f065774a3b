r"""Words around an extracted answer that change what it says: then it is no answer to reward.

Extraction finds "42" in "The answer is not 42", "5 squared", "at least 42", "42 hundredths",
"$42$ or $43$", "42 (wrong), correct is 41" and "The answer is 42. Wait, it is 41." Each is the
number, but not what the completion states, and the comparison would reward it. ``qualifier``
reads the answer's own clause (from where the answer starts to the end of its sentence; for the
fallbacks from the start of that sentence) and the few lines after it, and names the first word
that negates, scales, bounds, hedges or retracts the answer. The math verifier then grades it
``wrong``: a false positive trains the policy to write the qualified form; a false negative costs
one sample.

Scale words stay part of the answer: "$4 million" answers "#### 4" when the question counts in
millions (the labelled GSM8K-style rows in ``tests/verifiers/data`` say so), so "thousand",
"million" and "billion" qualify nothing.

Allowed: a word the gold answer itself contains ("No", ``x \neq 2``, "undefined"), and ``or`` /
``and`` inside the extracted answer, which the multi-part rule compares as parts ("x = -4 or
x = 1"). Units stay words of the answer ("25 square meters", "6 times"): "squared", "times",
"more", "than", "of" and the like qualify only right next to a number or math.

Linear in the input: one bounded window, fixed regexes.
"""

from __future__ import annotations

import re

from passband.verifiers._math_later import later_value, number
from passband.verifiers._math_shape import COMBINING_RE

__all__ = ["qualifier"]

_WINDOW = 400  # characters of the answer's clause that are read
_TAIL = 300  # characters after it where a retraction is looked for
_FAR = 4000  # characters after it where a later, different value is looked for
_CLAUSE_END_RE = re.compile(  # "18... or 22": an ellipsis does not end the clause
    r"(?<!\.)\.(?!\.)(?=\s|$)|[;!?\n]|\s(?:because|since|which|as|so|where)\s"
)
_CLAUSE_START_RE = re.compile(r"(?:[.,:](?=\s)|[;!?\n])[^.,:;!?\n]*$")
_NEGATING_COMMAND_RE = re.compile(r"\\(?:neg|not|lnot|lor|vee)(?![A-Za-z])")
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
_DOUBT = (  # anywhere in the answer's clause, whatever found the answer
    r"not|never|cannot|can't|isn't|aren't|wasn't|doesn't|don't|won't|wrong|incorrect|false|untrue"
    r"|maybe|possibly|possible|perhaps|probably|guess|unsure|unknown|wait|actually|kidding"
    r"|might|seems?|appears?|should|nope|correction|corrected|estimated|estimate|jk|think|uncertain"
    r"|tentative|tentatively|presumably|unverified|unconfirmed"
)
_CHANGES = (  # in a marker's answer clause, or after a fallback's number: they change the value
    r"or\s+(?:more|less|fewer|greater|so|above|below|higher|lower)"
    r"|no|none|neither|nor|negative|minus|inverse|reciprocal|power|least|most|fewer|greater|above"
    r"|below|about|approximately|approx|around|roughly|nearly|almost|likely|unlikely|or|either"
    r"|between|instead|but|except|unless|if|max|minimum|maximum|up\s+to|close\s+to|beyond|exceed\w*"
    r"|within|range|anywhere|from\s+\$?-?\d[\d.,]*\s*(?:to|-)\s*\$?-?\d+"
    r"|dozens?|doubled|tripled|halved|factorial|then\s+(?:add|subtract|multiply|divide|take)"
    r"|(?:hundredth|thousandth|millionth|tenth|third|quarter|fourth|fifth|sixth|seventh|eighth"
    r"|ninth)s?|halves|extraneous|rejected|discarded|impossible|alternatively|alt(?=\.)"
    # "5, otherwise it is 6" (not "18 (otherwise known as ...)")
    r"|(?:otherwise|else)(?=[,\s]+(?:(?:it|this|that|the\s+answer)\s+(?:is|would\s+be|will\s+be)\s+|it's\s+)?\$?-?\d)"
    r"|(?<=\d\s)(?:otherwise|else)(?!\s+(?:known|called|written|named))"
)
_DOUBT_RE = re.compile(rf"\b(?:{_DOUBT})\b", re.IGNORECASE)
_CHANGES_RE = re.compile(rf"\b(?:{_DOUBT}|{_CHANGES})\b", re.IGNORECASE)
_BEFORE_RE = re.compile(r"\b(?:less|more|greater|fewer)\s+than\b", re.IGNORECASE)
_AFTER_RE = re.compile(  # "5 squared", "42 times 3", "1/2 of 84", "twice 42", "half of 42"
    r"(?:[\d$})]\s*\{?\s*(?:squared|cubed)\b)|\broots?\s+of\b|\d[\s}$]*-?ish\b|~\s*-?\d"
    r"|\+\s*/\s*-|\bgive\s+or\s+take\b|\bplus\s+or\s+minus\b|\bi\s+hope(?:\s+so)?\W*\Z"  # "\boxed{5} +/- 1"
    r"|\b(?:times|more|less|than|over|under|of|plus)\s+(?:\$|\\|\d|-\d)"
    r"|\b(?:twice|double|triple|thrice|half)\s+(?:of\s+)?(?:\$|\\|\d|-\d)",
    re.IGNORECASE,
)
_RETRACT_RE = re.compile(  # read in the lines after the answer
    r"\b(?:wait|actually|oops|sorry|kidding|mistake|correction|scratch\s+that|second\s+thought"
    r"|i\s+was\s+wrong|nope|should\s+be|too\s+(?:big|small|large|high|low|many|few)"
    r"|correct\s+(?:answer|total|value|result|number)\s+is"
    r"|(?:answer|it)\s+(?:could|might|may)\s+also\s+be(?=\s+(?:\$|\\\(|\\boxed\{)?\s*-?\d)"
    r")\b|(?<=[)A-E])\s+(?:is|are|would\s+be)\s+also\s+(?:correct|right|valid|possible|acceptable)\b"
    r"|\bno\s*,|\bif\s+not\s*,|\\neq?(?![A-Za-z])"  # "Answer: B. If not, C."
    r"|\b(?:on\s+reflection|upon\s+re-?reading|i\s+made\s+an?\s+(?:error|mistake)"
    r"|i\s+miscount\w*|i\s+miscalculat\w*|that(?:'s|\s+is)\s+wrong)\b"
    r"|\b(?:maybe|perhaps|possibly)\s+\S{1,20}\s+instead\b"
    r"|\A(?:[^\n]*\n){0,2}[ \t$\\(\[]*or[ \t$\\)\]]*$"  # "or" alone on the next lines: two displays
    # a second answer offered after it: "Alternatively, 13.", "Or maybe $13$?" (a value that ends
    # its sentence: "Alternatively, 3 x 4 = 12 checks it" is working, not an answer)
    r"|\b(?:alternatively|(?:or\s+)?(?:maybe|perhaps|possibly))\b[,:]?[ \t]*"
    r"(?:(?:it|the\s+answer)\s+(?:is|could\s+be|might\s+be|would\s+be)\s+|it's\s+)?"
    r"(?:\$|\\\(|\\boxed\{|[ \t])*-?\d[\d,]*(?:\.\d+)?(?:\$|\\\)|\})*[ \t]*(?:[.!?](?=\s|\Z)|(?=\n|\Z))",
    re.IGNORECASE | re.MULTILINE,
)
# in the marker's own sentence before it: "Suppose the answer is 18", "a common mistake is to say"
_LEAD_RE = re.compile(  # not "if", "incorrect", "wrong": "Since (B) is incorrect, the answer is (A)"
    r"\b(?:suppose|supposing|assume|assuming|mistake\s+is|not\s+sure|unsure|might|maybe|perhaps"
    # "A common mistake would give \boxed{42}", "Students often get \boxed{42}"
    r"|(?:common|typical|frequent|classic|naive)\s+(?:mistake|error|pitfall|slip)"
    r"|(?:students|people|many)\s+(?:often|usually|commonly|typically|tend\s+to)\s+(?:get|say|write)"
    r"|guess|impossible)\b|\bnot\s*\Z|\(\s*(?:a\s+)?guess(?:ed|ing)?\s*\)"
    r"|\A\s*(?:guess(?:ed|ing)?|best\s+estimate)\s*:[\s$]*\Z"
    # "If n is odd: \boxed{19}": one case of several ("If we add them up:" is no case)
    r"|\A\s*if\b(?!\s+we\b)[^\n:]*(?:\bis\b|\bare\b|[=<>≤≥])[^\n:]*:[ \t$]*\Z",
    re.IGNORECASE,
)
# right before the answer (or its box), in its sentence: a sign, an approximation, a bound, a
# fraction or a rejection ("approximately \boxed{18}", "So x is negative 18.", "1 in 18", "1 / 18",
# "rather than 18")
_TOUCH = (
    r"\b(?:negative|minus|approximately|approx|about|around|roughly|nearly|almost|between"
    r"|at\s+(?:least|most)|(?:more|less|fewer|greater)\s+than|rather\s+than|instead\s+of"
    r"|(?:1|one)\s+in|isn't|not|(?:cannot|can't|could\s+not|couldn't|won't|not)\s+be"
    r"|not\s+equal\s+to|rule\s+out|reject|never|could\s+be|(?:just|well)\s+(?:over|under)"
    r"|in\s+excess\s+of|upwards\s+of|(?:north|south|shy)\s+of"
    r"|in\s+the\s+(?:ballpark|neighbou?rhood)\s+of|on\s+the\s+order\s+of|something\s+like|circa"
    r"|exceed(?:s|ed|ing)?|(?:(?:is|are|was|were|be|it's|that's|stays?|remains?|kept|keep)\s+"
    r"|^[ \t]*(?:answer\s*:\s*)?)(?:under|below|over|above|beyond|up\s+to)"  # not "adds up to"
    r")|~|!=|≠"
)
_TOUCH_END = r"[\s$*({]*(?:\\(?:boxed|fbox)\s*)?\Z"
_TOUCH_RE = re.compile(rf"(?:{_TOUCH}){_TOUCH_END}|\d\s*/\s*\Z", re.IGNORECASE)
# a hedge between two values right before the answer: "42 or \boxed{43}", "between 18 and
# \boxed{19}", "18, or possibly 19"; a restatement after a comma is no hedge ("2 hours and 40
# minutes, or 160 minutes")
_HEDGE_RE = re.compile(
    rf"(?:(?:^|[^,;\s])\s+or|\bor\s+(?:possibly|maybe|perhaps|rather|else|even)"
    rf"|\bbetween\s+\S+\s+and)[\s}}]*{_TOUCH_END}",
    re.IGNORECASE,
)
# a relation before a box or a marker's answer ("$x \geq \boxed{18}$"); not before a fallback's
# number, where it compares two stated values ("Because 200 < 220, Lola wins") or names the
# least one needed ("Thus, x >= 94", GSM8K's own working); nor a calculator annotation's ">>"
_TOUCH_RELATION_RE = re.compile(
    rf"(?:\\(?:approx|sim|simeq|geq?|leq?|gt|lt)(?![A-Za-z])|(?:(?<![<>])<|(?<![<>=-])>)=?){_TOUCH_END}"
)
# the stated answer itself ends in a comparison: "The answer is one less" (a difference); after a
# number in the text it is a count ("She needs 4 more.", "four more boxes")
_DIFFERENCE_RE = re.compile(r"\b(?:less|more|fewer)\s*$", re.IGNORECASE)
_OWN_BOUND_RE = re.compile(  # in the answer itself: "(lower bound)", "twelve squared" (not 12)
    r"\b(?:lower|upper)\s+bound\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|[a-z]+teen|[a-z]+ty)\s+(?:squared|cubed|hundred)\b",
    re.IGNORECASE,
)
# "$18$, $22$", "\(18\); \(20\)", "$18$ | $20$": a different standalone value right after it
_SECOND_VALUE_RE = re.compile(
    r"\A[ \t]*(?:\$|\\\))?[ \t]*[,/;|][ \t]*(?:\$|\\\()?[ \t]*(-?\d[\d,]*(?:\.\d+)?)"
    r"(?=[ \t]*(?:\$|\\\)|[.,;|]|\n|\Z))"  # standalone: not "18; 2 boxes of 9", "2 \times 9"
)
# a fallback's number that ends a list: "So the total is 18 and 20." offers two
_LISTED_RE = re.compile(r"\d\s*(?:,|&|\band\b)\s*\Z")
# "\boxed{18}+", "18 (?)": more than it, or a question
_OPEN_ENDED_RE = re.compile(  # and a combining mark on it: "5\u0338" (struck through)
    r"\A[\s$}]*(?:\+(?=[\s$]*(?:[.,;)]|\Z))|\(\s*(?:\?|guess(?:ed|ing)?|a\s+guess)\s*\))"
    rf"|\A{COMBINING_RE.pattern}",
    re.IGNORECASE,
)
# a short sentence after it that says it is not exact, not right or not checked: "This is only a
# lower bound.", "Give or take one.", "This may be incorrect.", "I haven't verified this."
_NOT_EXACT = (
    r"(?:this|that|it|which)(?:'s|\s+is|\s+was)?\s+(?:only|just|merely)\s+(?:an?\s+)?"
    r"(?:lower|upper)\s+bound\b|(?:this|that|it)(?:'s|\s+is)\s+(?:an?\s+)?(?:lower|upper)\s+bound(?=\W*\Z)"
    r"|(?:this|that|it)\s+(?:over|under)-?estimates?\b|give\s+or\s+take\b|plus\s+or\s+minus\b"
    r"|(?:(?:this|that|it|the\s+above|my\s+answer)(?:'s|\s+is|\s+was|\s+(?:may|might|could)\s+be)\s+"
    r"(?:probably\s+|likely\s+|possibly\s+|definitely\s+)?(?:not\s+(?:right|correct)|wrong|incorrect)"
    r"|(?:this|that|it)\s+(?:can't|cannot|can\s+not|couldn't)\s+be\s+right"
    r"|i\s+(?:haven't|have\s+not|didn't|did\s+not)\s+(?:verified|checked|confirmed|verify|check)"
    r"(?:\s+(?:this|it|that|the\s+answer))?|i\s+hope(?:\s+so)?)(?=\W*\Z|,?\s+though\b)"
)
# a short sentence right after the answer that takes it back: "Not sure though.", "Or 20."
_AFTERTHOUGHT_RE = re.compile(
    r"\A[\s.()*_]*(?:but\s+|though\s+|hmm,?\s+)?(?:i'?m\s+|i\s+am\s+)?(?:not\s+(?:100%\s+)?"
    r"(?:sure|confident|certain)|unsure|uncertain|or\s+not\b|low\s+confidence|confidence:?\s*low"
    r"|doubtful|i\s+(?:could|might)\s+be\s+(?:wrong|mistaken)|i\s+suppose"
    # a sentence that is only a guess or a hedge: "That is my best guess.", "(Educated guess.)",
    # "I'm guessing.", "Probably." (not "A guess of 10 gives 60 legs": working)
    r"|(?:honestly,?\s+)?(?:(?:that|this|it)(?:'s|\s+is|\s+was)\s+)?(?:just\s+|only\s+)?"
    r"(?:my\s+|a\s+|an\s+)?(?:best\s+|educated\s+|rough\s+|wild\s+)?guess"
    r"(?=(?:,?\s*(?:really|though|anyway|honestly))?[\s.!)]*\Z)"
    r"|(?:i'?m\s+|i\s+am\s+|just\s+)?guessing(?:\s+here)?(?=[\s.!)]*\Z)|(?:i\s+)?guessed(?=[\s.!)]*\Z)"
    r"|(?:my\s+guess|best\s+estimate),?\s+anyway(?=[\s.!)]*\Z)"
    r"|(?:probably|maybe|perhaps|possibly|i\s+think|i\s+guess|unverified"
    r"|not\s+(?:entirely|completely|totally|quite|fully)\s+sure|not\s+positive|could\s+be\s+wrong"
    r"|i\s+(?:can't|cannot|couldn't|could\s+not)\s+(?:verify|check|confirm)\s+(?:this|it|that))"
    r"(?=[\s.!)]*\Z)"
    r"|or\s+(?:maybe\s+|perhaps\s+|possibly\s+)?(?:is\s+it\s+)?[$\\(]*-?\d"
    rf"|{_NOT_EXACT})",
    re.IGNORECASE,
)
# another case's value right after the answer's clause, when the answer is itself one case of a
# condition ("For even n the answer is 18; for odd n it is 20", "18 when x > 0, and when x < 0
# it is -18"), or the other branch ("\boxed{18} (if an integer; else 18.5)"). A value that does
# not end its clause is working ("Otherwise, 10 students would have no seat"), and a head without
# a condition is a remark ("For one hour, it is 30 miles", "For a = 6 we get 22").
_CASE_COND = (  # a word at a word boundary, or a relation sign (spaces around it or not)
    r"(?:\b(?:even|odd|positive|negative|non-?negative|non-?zero|zero|prime|composite"
    r"|(?:greater|less|larger|smaller|more|bigger)\s+than)\b|[<>≤≥]|\\(?:le|ge|lt|gt|leq|geq|neq?)\b)"
)
_CASE_VERB = (  # "it is", "the total is", "we get", "it equals", "it'd be", "the answer changes to"
    r"(?:(?:it|this|that|there|(?:the\s+)?[a-z]+)\s+(?:is|are|would\s+be|will\s+be|becomes|equals"
    r"|changes\s+to)|it's|it'd\s+be|we\s+(?:get|have)|you\s+get|=)\s+"
)
_CASE_END = r"(?=(?:\s*(?:\$|\\\)|\}))*\s*(?:[.;,!?)]|\n|\Z|(?:and|but|while|whereas)\b))"
_OTHER_HEAD = (  # a head that names the other branch itself ("in that case": the answer's own)
    r"otherwise|else|unless\b(?!\s+(?:stated|noted|otherwise|specified))[^.;:!?\n,]{0,40}?,"
    r"(?:\s*in\s+which\s+case)?|in\s+(?:the\s+other|which)\s+case"
    r"|in\s+case\b(?!\s+(?:you|anyone|of|it\s+helps))[^.;:!?\n,]{0,40}?,"
    r"|failing\s+that|if\s+not\b(?!\s+for\b)[^.;:!?\n,]{0,30}?"
)
_CASE_VALUE_RE = re.compile(
    r"\A[\s;,.()]*(?:and\s+|but\s+|while\s+|whereas\s+)?"
    rf"(?:(?P<other>{_OTHER_HEAD})[,:]?\s+(?:{_CASE_VERB})?"
    rf"|(?:for|if|when)\b[^.;:!?\n]{{0,40}}?{_CASE_COND}[^.;:!?\n]{{0,30}}?(?:[,:]\s*|\s+{_CASE_VERB})"
    rf"|(?:it\s+is\s+|it's\s+)?(?=-?\d[\d,]*(?:\.\d+)?\s+(?:(?P<after>otherwise|else)\b"
    rf"|(?:for|if|when)\b[^.;:!?\n]{{0,30}}?{_CASE_COND})))"
    rf"(?:\$|\\\(|\\boxed\{{|[ \t])*(?P<value>-?\d[\d,]*(?:\.\d+)?)"
    rf"(?:{_CASE_END}|(?=\s+(?:otherwise|else|for|if|when)\b))",
    re.IGNORECASE,
)
_CASE_OWN_RE = re.compile(  # the answer's own sentence is a case of a condition
    rf"(?:\b(?:for|if|when)\b[^.;:!?\n]{{0,40}}?{_CASE_COND})", re.IGNORECASE
)
_COND_WORD_RE = re.compile(_CASE_COND, re.IGNORECASE)
# a condition's complement, by family: the other case must be the rest of the answer's own
_FAMILIES = (
    ("even", "odd"),
    ("positive", "negative", "non-negative", "nonnegative", "zero", "nonzero", "non-zero"),
    ("greater", "less", "larger", "smaller", "more", "bigger", "<", ">", "≤", "≥", "\\le", "\\ge")
    + ("\\lt", "\\gt", "\\leq", "\\geq"),
    ("prime", "composite"),
)
# the answer drawn from a rule, not one case of it: "For even n it is 1, so (-1)^{2024} = 1"
_SETTLED_RE = re.compile(
    r"\b(?:so|thus|hence|therefore)\b|\b(?:for|if|when)\s+[a-z]\s*=\s*\d"
    r"|\b\d+\s+is\s+(?:even|odd|prime|positive|negative)",
    re.IGNORECASE,
)
# the other value rejected or compared right after it: working, not a second answer
_REJECTED_RE = re.compile(
    r"\A[^.;!?\n]*\b(?:reject\w*|discard\w*|not\s+(?:allowed|valid|possible|positive|negative|enough"
    r"|an?\s+)|impossible|invalid|contradict\w*|violat\w*|doesn't\s+work|does\s+not\s+work|out|but"
    r"|less\s+than|fewer\s+than|more\s+than|short|too\s+(?:few|many|small|large))\b",
    re.IGNORECASE,
)
_ASKED_RE = re.compile(  # "\boxed{12}?": a question, not a statement ("... 12? Yes." answers it)
    r"\A[\s$}]*\?(?!\s*(?:yes|indeed|correct)\b)", re.IGNORECASE
)
_SENTENCE_START_RE = re.compile(r"(?:[.!?](?=\s)|\n)[^.!?\n]*\Z")
_FALLBACKS = ("last_math", "last_number")
_MULTI = ("or", "and")


_CONTRAST_RE = re.compile(  # right after the answer: "42, not 41", "42 apples, not 41", "42 (not 41)"
    r"\A[}$]*(?:[ \t]*[A-Za-z]+){0,2}[ \t]*(?:,[ \t]*|\([ \t]*)not[ \t]+\$?(-?\d[\d,]*(?:\.\d+)?)[ \t]*\)?"
)


def _without_contrast(post: str, answer: str) -> str:
    """``post`` without a leading "not N" that names a value other than the answer: it says the
    answer against another ("The answer is 42, not 41"), which doubts nothing."""
    found = _CONTRAST_RE.match(post)
    if not found or number(found.group(1)) is None or number(found.group(1)) == number(answer):
        return post
    return post[found.end() :]


def qualifier(text: str, where: int, strategy: str, answer: str, gold: str) -> str | None:
    """The word (or command) in ``text`` around the answer at ``where`` that changes what the
    answer says, or None. ``strategy`` is the extractor that found it: a marker's clause starts
    at the marker ("The answer is ..."); a fallback's is the clause its number sits in, where the
    words before the number are the working ("a total of 540") and only doubt counts."""
    fallback = strategy in _FALLBACKS
    rest = text[where : where + _WINDOW]
    at = rest.find(answer[:40]) if answer else -1
    begin, finish = (at, at + len(answer)) if at >= 0 else (0, 0)
    end = _CLAUSE_END_RE.search(rest, finish)
    stop = end.start() if end else len(rest)
    pre, post = rest[:begin], _without_contrast(rest[finish:stop], answer)  # "42, not 41"
    if fallback:
        head = _CLAUSE_START_RE.search(text, max(0, where - _WINDOW), where)
        pre = text[head.start() + 1 if head else max(0, where - _WINDOW) : where]
    far = text[where + (end.end() if end else len(rest)) :][:_FAR]
    tail = far[:_TAIL]
    lead = "" if fallback else _lead(text, where)
    touching = re.split(r"[.!?](?=\s)|\n", text[max(0, where - 60) : where])[-1]
    touching = re.sub(r"^[ \t]*(?:>[ \t]*)+", "", touching)  # a markdown quote, not "greater"
    allowed = {w.lower() for w in re.findall(r"[A-Za-z']+", gold)}
    allowed |= {w for w in _MULTI if re.search(rf"\S\s+{w}\s+\S", answer, re.IGNORECASE)}
    command = _NEGATING_COMMAND_RE.search(pre + answer + post)
    if command and command.group(0) not in gold:
        return command.group(0)
    pre, own, post = (_COMMAND_RE.sub(" ", t) for t in (pre, answer, post))  # \text{..}: words stay
    after = f"{own} {post}" if fallback else f"{pre} {own} {post}"
    checks = [
        (_DOUBT_RE, pre),
        (_CHANGES_RE, after),
        (_AFTER_RE, after),
        (_BEFORE_RE, "" if fallback else pre),
        (_RETRACT_RE, tail),
        (_LEAD_RE, lead),
        (_TOUCH_RE, touching),
        (_HEDGE_RE, touching),
        (_TOUCH_RELATION_RE, "" if fallback else touching),
        (_AFTERTHOUGHT_RE, "" if end and end.group(0).strip().isalpha() else _first_sentence(tail)),
        (_LISTED_RE, touching if fallback else ""),
        (_OPEN_ENDED_RE, rest[finish : finish + 16] if at >= 0 else ""),
        (_ASKED_RE, rest[finish:] if at >= 0 else ""),
        (_DIFFERENCE_RE, own),
        # "\\boxed{12 \\text{ (lower bound)}}"; "this bound is tight" after it is prose
        (_OWN_BOUND_RE, own),
    ]
    for pattern, where_text in checks:
        for found in pattern.finditer(where_text):
            word = found.group(0).strip()
            words = re.findall(r"[A-Za-z']+", word.lower())
            if not words or not all(w in allowed for w in words):  # "~22": a symbol qualifies too
                return word
    second = _SECOND_VALUE_RE.match(rest[finish : finish + 24]) if at >= 0 else None
    if second and number(second.group(1)) != number(answer):
        return second.group(0).strip()
    case = _other_case(post, tail, f"{lead} {own} {post}", answer) or _rough(
        text, where, post, tail
    )
    if case:
        return case
    return later_value(far, answer)  # "So it's 13." after a box of 12


def _other_case(post: str, tail: str, own: str, answer: str) -> str | None:
    """Another case's or branch's different value, right after the answer: in its clause
    (``post``: "18, and for odd n it is 20") or the next one (``tail``). A case counts when the
    answer's own sentence (``own``) is a case of the complementary condition (even / odd,
    positive / negative, greater / less, prime / composite) and not a conclusion drawn from a
    rule; a value rejected or compared right after it is working."""
    for place in (post, tail):
        case = _CASE_VALUE_RE.match(place)
        if not case or number(case.group("value")) == number(answer):
            continue
        if not (case.group("other") or case.group("after")):
            mine = _CASE_OWN_RE.search(own)
            if not mine or _SETTLED_RE.search(own[mine.start() :]):
                continue
            theirs = _COND_WORD_RE.findall(place[: case.end() + 40])
            if not _complement(_COND_WORD_RE.findall(mine.group(0))[-1], theirs[-1:]):
                continue
        if not _REJECTED_RE.match(place[case.end() :]):
            return case.group(0).strip()
    return None


_ROUGH_RE = re.compile(  # "Approximately.", "That's an estimate."
    r"\A[\s.()*_]*(?:approximately|roughly|(?:(?:that|this|it)(?:'s|\s+is)\s+)?(?:just\s+|only\s+)?"
    r"(?:an?\s+)?(?:rough\s+)?(?:estimate|approximation))(?=[\s.!)]*\Z)",
    re.IGNORECASE,
)
_ROUNDED_ON_RE = re.compile(r"\(\s*rounded\s*\)", re.IGNORECASE)  # "\boxed{5} (rounded)"
_ROUNDED_RE = re.compile(r"round|nearest|decimal\s+place|estimat", re.IGNORECASE)


def _rough(text: str, where: int, clause: str, tail: str) -> str | None:
    """ "Approximately." or "That's an estimate." right after an answer, "(rounded)" on it, when
    the answer was not itself rounded or estimated (said before it, or in its own ``clause``)."""
    before = text[max(0, where - 300) : where]
    found = _ROUGH_RE.match(_first_sentence(tail))
    if found and not _ROUNDED_RE.search(before + clause):
        return found.group(0).strip()
    found = _ROUNDED_ON_RE.search(clause)
    return found.group(0).strip() if found and not _ROUNDED_RE.search(before) else None


def _complement(mine: str, theirs: list[str]) -> bool:
    """Whether the condition word ``theirs[0]`` is another of ``mine``'s family."""
    a, b = mine.lower().split()[0], (theirs[0].lower().split()[0] if theirs else "")
    return a != b and any(a in f and b in f for f in _FAMILIES)


def _first_sentence(text: str) -> str:
    """The sentence (or line) ``text`` starts with, if short: an afterthought, not a paragraph."""
    head = re.match(r"\s*[^.!?\n]*[.!?]?", text)
    return head.group(0) if head and len(head.group(0).strip()) <= 60 else ""


def _lead(text: str, where: int) -> str:
    """The words of the answer's sentence before its marker ("Suppose the answer is"; "not" in
    "not \\boxed{18}"), LaTeX commands dropped."""
    start = max(0, where - _WINDOW)
    head = _SENTENCE_START_RE.search(text, start, where)
    lead = text[head.start() + 1 if head else start : where]
    return _COMMAND_RE.sub(" ", lead)
