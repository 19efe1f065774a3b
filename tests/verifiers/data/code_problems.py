"""Realistic code problems in the formats real datasets use, for ``test_code_problems.py``.

Written for this suite in the style of HumanEval (``prompt``/``canonical_solution``/``test`` with
``METADATA`` and ``check(candidate)``), MBPP (``test_list``, ``test_setup_code``, ``test_imports``),
APPS/CodeContests (``io`` pairs) and LiveCodeBench (class ``Solution`` with a method). Each problem
has a canonical solution that must pass and broken variants (off by one, wrong type, returning
None, raising, looping) with the status each must get.

Each entry: ``name``, ``kind`` (he | mbpp | io | lcb), the reference fields the verifier takes,
``good`` (a completion) and ``bad`` (a list of ``(completion, status)``).
"""

from __future__ import annotations

T = '"""'


def fence(src: str, prose: str = "Here is the solution:") -> str:
    return f"{prose}\n\n```python\n{src.strip()}\n```\n\nThis runs in O(n) time."


def he(name, prompt, body, test, entry_point, bad, good=None):
    """HumanEval style: the canonical completion is the prompt continued by the body."""
    return {
        "name": name,
        "kind": "he",
        "ref": {"prompt": prompt, "test": test, "entry_point": entry_point},
        "good": good or prompt + body,
        "body": body,
        "bad": [(prompt + b, s) for b, s in bad],
    }


PROBLEMS: list[dict] = []
add = PROBLEMS.append

# ---- HumanEval style ------------------------------------------------------------------------------
add(
    he(
        "he_separate_parens",
        f"from typing import List\n\n\ndef separate_paren_groups(paren_string: str) -> List[str]:\n"
        f"    {T} Split balanced, non-nested-at-top groups of parentheses; ignore spaces.\n"
        f"    >>> separate_paren_groups('( ) (( )) (( )( ))')\n    ['()', '(())', '(()())']\n    {T}\n",
        "    result = []\n    current = []\n    depth = 0\n    for c in paren_string:\n"
        "        if c == '(':\n            depth += 1\n            current.append(c)\n"
        "        elif c == ')':\n            depth -= 1\n            current.append(c)\n"
        "            if depth == 0:\n                result.append(''.join(current))\n                current.clear()\n"
        "    return result\n",
        "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\ndef check(candidate):\n"
        "    assert candidate('(()()) ((())) () ((())()())') == [\n        '(()())', '((()))', '()', '((())()())'\n    ]\n"
        "    assert candidate('() (()) ((())) (((())))') == [\n        '()', '(())', '((()))', '(((())))'\n    ]\n"
        "    assert candidate('(()(())((())))') == [\n        '(()(())((())))'\n    ]\n"
        "    assert candidate('( ) (( )) (( )( ))') == ['()', '(())', '(()())']\n",
        "separate_paren_groups",
        [("    return paren_string.split()\n", "wrong"), ("    pass\n", "wrong")],
    )
)

add(
    he(
        "he_mean_abs_dev",
        f"from typing import List\n\n\ndef mean_absolute_deviation(numbers: List[float]) -> float:\n"
        f"    {T} Mean absolute deviation around the mean.\n    >>> mean_absolute_deviation([1.0, 2.0, 3.0, 4.0])\n"
        f"    1.0\n    {T}\n",
        "    mean = sum(numbers) / len(numbers)\n    return sum(abs(x - mean) for x in numbers) / len(numbers)\n",
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
        "    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6\n"
        "    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6\n"
        "    assert abs(candidate([1.0, 2.0, 3.0, 4.0, 5.0]) - 6.0/5.0) < 1e-6\n",
        "mean_absolute_deviation",
        [
            (
                "    mean = sum(numbers) / len(numbers)\n    return sum(abs(x - mean) for x in numbers) / (len(numbers) - 1)\n",
                "wrong",
            ),
            ("    return str(sum(numbers) / len(numbers))\n", "wrong"),
            ("    return None\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_intersperse",
        f"from typing import List\n\n\ndef intersperse(numbers: List[int], delimeter: int) -> List[int]:\n"
        f"    {T} Insert delimeter between every two consecutive elements.\n    {T}\n",
        "    if not numbers:\n        return []\n    result = []\n    for n in numbers[:-1]:\n"
        "        result.append(n)\n        result.append(delimeter)\n    result.append(numbers[-1])\n    return result\n",
        "\n\nMETADATA = {'author': 'jt', 'dataset': 'test'}\n\n\ndef check(candidate):\n"
        "    assert candidate([], 7) == []\n    assert candidate([5, 6, 3, 2], 8) == [5, 8, 6, 8, 3, 8, 2]\n"
        "    assert candidate([2, 2, 2], 2) == [2, 2, 2, 2, 2]\n",
        "intersperse",
        [
            (
                "    out = []\n    for n in numbers:\n        out += [n, delimeter]\n    return out\n",
                "wrong",
            ),
            ("    return tuple(numbers)\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_all_prefixes",
        f"from typing import List\n\n\ndef all_prefixes(string: str) -> List[str]:\n"
        f"    {T} All prefixes from shortest to longest.\n    >>> all_prefixes('abc')\n    ['a', 'ab', 'abc']\n    {T}\n",
        "    result = []\n    for i in range(len(string)):\n        result.append(string[:i+1])\n    return result\n",
        "\n\ndef check(candidate):\n    assert candidate('') == []\n"
        "    assert candidate('asdfgh') == ['a', 'as', 'asd', 'asdf', 'asdfg', 'asdfgh']\n"
        "    assert candidate('WWW') == ['W', 'WW', 'WWW']\n",
        "all_prefixes",
        [
            ("    return [string[:i] for i in range(len(string))]\n", "wrong"),
            ("    return (string[:i + 1] for i in range(len(string)))\n", "wrong"),
        ],
    )
)  # a generator is not a list

add(
    he(
        "he_count_distinct",
        f"def count_distinct_characters(string: str) -> int:\n"
        f"    {T} How many distinct characters, regardless of case.\n    {T}\n",
        "    return len(set(string.lower()))\n",
        "\n\ndef check(candidate):\n    assert candidate('') == 0\n    assert candidate('abcde') == 5\n"
        "    assert candidate('abcde' + 'cade' + 'CADE') == 5\n    assert candidate('aaaaAAAAaaaa') == 1\n"
        "    assert candidate('Jerry jERRY JeRRRY') == 5\n",
        "count_distinct_characters",
        [
            ("    return len(set(string))\n", "wrong"),
            ("    return float(len(set(string.lower()))) + 0.5\n", "wrong"),
            ("    raise NotImplementedError\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_find_zero_poly",  # the test calls poly, a helper the prompt defines
        "import math\n\n\ndef poly(xs: list, x: float):\n"
        f"    {T}\n    Evaluates polynomial with coefficients xs at point x.\n    {T}\n"
        "    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])\n\n\n"
        f"def find_zero(xs: list):\n    {T} xs are coefficients of a polynomial with an even number of\n"
        f"    coefficients; return one zero point.\n    {T}\n",
        "    begin, end = -1., 1.\n    while poly(xs, begin) * poly(xs, end) > 0:\n        begin *= 2.0\n        end *= 2.0\n"
        "    while end - begin > 1e-10:\n        center = (begin + end) / 2.0\n"
        "        if poly(xs, center) * poly(xs, begin) > 0:\n            begin = center\n        else:\n"
        "            end = center\n    return begin\n",
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    import math\n    import random\n"
        "    rng = random.Random(42)\n    import copy\n    for _ in range(100):\n"
        "        ncoeff = 2 * rng.randint(1, 4)\n        coeffs = []\n        for _ in range(ncoeff):\n"
        "            coeff = rng.randint(-10, 10)\n            if coeff == 0:\n                coeff = 1\n"
        "            coeffs.append(coeff)\n        solution = candidate(copy.deepcopy(coeffs))\n"
        "        assert math.fabs(poly(coeffs, solution)) < 1e-4\n",
        "find_zero",
        [
            ("    return 0.0\n", "wrong"),
            # redefining the trusted helper the test relies on must not help
            ("    return 0.0\n\ndef poly(xs, x):\n    return 0.0\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_decode_cyclic",  # the test calls encode_cyclic from the prompt and uses a random string
        f"def encode_cyclic(s: str):\n    {T} Cycle groups of three characters. {T}\n"
        "    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]\n"
        "    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]\n"
        '    return "".join(groups)\n\n\n'
        f"def decode_cyclic(s: str):\n    {T} Takes a string encoded with encode_cyclic; returns the decoded string. {T}\n",
        "    return encode_cyclic(encode_cyclic(s))\n",
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    from random import randint, choice\n    import string\n\n"
        "    letters = string.ascii_lowercase\n    for _ in range(100):\n"
        "        str = ''.join(choice(letters) for i in range(randint(10, 20)))\n"
        "        encoded_str = encode_cyclic(str)\n        assert candidate(encoded_str) == str\n",
        "decode_cyclic",
        [
            ("    return encode_cyclic(s)\n", "wrong"),
            ("    return s\n", "wrong"),
            (
                "    return encode_cyclic(encode_cyclic(s))\n\ndef encode_cyclic(s):\n    return s\n",
                "wrong",
            ),
        ],
    )
)

add(
    he(
        "he_sort_third",
        f"def sort_third(l: list):\n    {T} Values at indices divisible by three are sorted; the others stay. {T}\n",
        "    l = list(l)\n    l[::3] = sorted(l[::3])\n    return l\n",
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
        "    assert tuple(candidate([1, 2, 3])) == tuple(sort_third([1, 2, 3]))\n"
        "    assert tuple(candidate([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])) == tuple(sort_third([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10]))\n"
        "    assert tuple(candidate([5, 6, 3, 4, 8, 9, 2])) == tuple([2, 6, 3, 4, 8, 9, 5])\n"
        "    assert tuple(candidate([5, 8, 3, 4, 6, 9, 2])) == tuple([2, 8, 3, 4, 6, 9, 5])\n"
        "    assert tuple(candidate([5, 6, 9, 4, 8, 3, 2])) == tuple([2, 6, 9, 4, 8, 3, 5])\n"
        "    assert tuple(candidate([5, 6, 3, 4, 8, 9, 2, 1])) == tuple([2, 6, 3, 4, 8, 9, 5, 1])\n",
        "sort_third",
        [("    return sorted(l)\n", "wrong"), ("    return None\n", "wrong")],
    )
)

add(
    he(
        "he_pairs_sum_to_zero",
        f"def pairs_sum_to_zero(l):\n    {T} True if two distinct elements sum to zero. {T}\n",
        "    for i, l1 in enumerate(l):\n        for j in range(i + 1, len(l)):\n            if l1 + l[j] == 0:\n"
        "                return True\n    return False\n",
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
        "    assert candidate([1, 3, 5, 0]) == False\n    assert candidate([1, 3, -2, 1]) == False\n"
        "    assert candidate([1, 2, 3, 7]) == False\n    assert candidate([2, 4, -5, 3, 5, 7]) == True\n"
        "    assert candidate([1]) == False\n    assert candidate([-3, 9, -1, 3, 2, 30]) == True\n"
        "    assert candidate([-3, 9, -1, 4, 2, 31]) == False\n",
        "pairs_sum_to_zero",
        [
            ("    return any(a + b == 0 for a in l for b in l)\n", "wrong"),
            ("    return 0\n", "wrong"),
        ],
    )
)  # 0 == False is True in Python, but not for the True cases

add(
    he(
        "he_fib_memo",  # recursion about 900 deep must work
        f"def fib_mod(n: int) -> int:\n    {T} The n-th Fibonacci number modulo 1_000_000_007, recursively. {T}\n",
        "    import functools\n\n    @functools.lru_cache(maxsize=None)\n    def go(k):\n"
        "        return k if k < 2 else (go(k - 1) + go(k - 2)) % 1_000_000_007\n    return go(n)\n",
        "\n\ndef check(candidate):\n    assert candidate(0) == 0\n    assert candidate(10) == 55\n"
        "    assert candidate(90) == 2880067194370816120 % 1_000_000_007\n"
        "    a, b = 0, 1\n    for _ in range(450):\n        a, b = b, (a + b) % 1_000_000_007\n"
        "    assert candidate(450) == a\n",
        "fib_mod",
        [
            (
                "    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n    return a % 1_000_000_007\n",
                "wrong",
            ),
            ("    return fib_mod(n + 1)\n", "wrong"),
        ],
    )
)  # RecursionError

add(
    he(
        "he_deep_recursion",
        f"def depth_sum(n: int) -> int:\n    {T} 1 + 2 + ... + n, computed by plain recursion (n <= 950). {T}\n",
        "    return 0 if n == 0 else n + depth_sum(n - 1)\n",
        "\n\ndef check(candidate):\n    assert candidate(0) == 0\n    assert candidate(950) == 950 * 951 // 2\n",
        "depth_sum",
        [("    return 0 if n == 0 else n + depth_sum(n)\n", "wrong")],
    )
)

add(
    he(
        "he_words_string",
        f"def words_string(s):\n    {T} Split on commas and spaces. {T}\n",
        "    if not s:\n        return []\n    return s.replace(',', ' ').split()\n",
        '\n\ndef check(candidate):\n\n    # Check some simple cases\n    assert True, "This prints if this assert fails 1 (good for debugging!)"\n'
        '    assert candidate("Hi, my name is John") == ["Hi", "my", "name", "is", "John"]\n'
        '    assert candidate("One, two, three, four, five, six") == ["One", "two", "three", "four", "five", "six"]\n'
        '    assert candidate("Hi, my name") == ["Hi", "my", "name"]\n\n'
        "    # Check some edge cases that are easy to work out by hand.\n"
        '    assert True, "This prints if this assert fails 2 (also good for debugging!)"\n'
        '    assert candidate("") == []\n    assert candidate("ahmed     , gamal") == ["ahmed", "gamal"]\n',
        "words_string",
        [
            ("    return s.split(',')\n", "wrong"),
            ("    return ' '.join(s.replace(',', ' ').split())\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_by_length",
        f"def by_length(arr):\n    {T} Sort 1..9, reverse, and name the digits. {T}\n",
        "    dic = {1: 'One', 2: 'Two', 3: 'Three', 4: 'Four', 5: 'Five', 6: 'Six', 7: 'Seven', 8: 'Eight', 9: 'Nine'}\n"
        "    new_arr = []\n    for var in sorted(arr, reverse=True):\n        try:\n            new_arr.append(dic[var])\n"
        "        except KeyError:\n            pass\n    return new_arr\n",
        '\n\ndef check(candidate):\n    assert True, "This prints if this assert fails 1 (good for debugging!)"\n'
        '    assert candidate([2, 1, 1, 4, 5, 8, 2, 3]) == ["Eight", "Five", "Four", "Three", "Two", "Two", "One", "One"], "Error"\n'
        '    assert candidate([]) == [], "Error"\n    assert candidate([1, -1 , 55]) == [\'One\'], "Error"\n'
        '    assert True, "This prints if this assert fails 2 (also good for debugging!)"\n'
        '    assert candidate([1, -1, 3, 2]) == ["Three", "Two", "One"]\n'
        '    assert candidate([9, 4, 8]) == ["Nine", "Eight", "Four"]\n',
        "by_length",
        [
            (
                "    names = ['One','Two','Three','Four','Five','Six','Seven','Eight','Nine']\n"
                "    return [names[v - 1] for v in sorted(arr, reverse=True)]\n",
                "wrong",
            )
        ],
    )
)

add(
    he(
        "he_even_odd_tuple",
        f"def even_odd_palindrome(n):\n    {T} (count of even, count of odd) palindromes in 1..n. {T}\n",
        "    def is_pal(k):\n        return str(k) == str(k)[::-1]\n    even = odd = 0\n    for i in range(1, n + 1):\n"
        "        if is_pal(i):\n            if i % 2:\n                odd += 1\n            else:\n                even += 1\n"
        "    return (even, odd)\n",
        "\n\ndef check(candidate):\n    assert candidate(123) == (8, 13)\n    assert candidate(12) == (4, 6)\n"
        "    assert candidate(3) == (1, 2)\n    assert candidate(63) == (6, 8)\n    assert candidate(25) == (5, 6)\n"
        '    assert candidate(19) == (4, 6), "This prints if this assert fails 1 (good for debugging!)"\n'
        '    assert candidate(9) == (4, 5), "This prints if this assert fails 2 (also good for debugging!)"\n'
        '    assert candidate(1) == (0, 1), "This prints if this assert fails 2 (also good for debugging!)"\n',
        "even_odd_palindrome",
        [
            (
                "    e = o = 0\n    for i in range(1, n):\n        if str(i) == str(i)[::-1]:\n"
                "            e, o = (e + 1, o) if i % 2 == 0 else (e, o + 1)\n    return (e, o)\n",
                "wrong",
            ),
            ("    return [0, 0]\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_rounded_avg",
        f"def rounded_avg(n, m):\n    {T} Binary of the rounded average of n..m, or -1 if n > m. {T}\n",
        "    if m < n:\n        return -1\n    summation = 0\n    for i in range(n, m + 1):\n        summation += i\n"
        "    return bin(round(summation / (m - n + 1)))\n",
        '\n\ndef check(candidate):\n    assert candidate(1, 5) == "0b11"\n    assert candidate(7, 13) == "0b1010"\n'
        '    assert candidate(964, 977) == "0b1111001010"\n    assert candidate(996, 997) == "0b1111100100"\n'
        '    assert candidate(7, 5) == -1\n    assert candidate(5, 1) == -1\n    assert candidate(5, 5) == "0b101"\n',
        "rounded_avg",
        [
            ("    if m < n:\n        return None\n    return bin(round((n + m) / 2))\n", "wrong"),
            ("    if m < n:\n        return -1\n    return round((n + m) / 2)\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_generator_result",  # a model may return a generator; tests wrap it in list()/sorted()/len()
        f"def squares_upto(n: int):\n    {T} Squares of 0..n-1 (any iterable). {T}\n",
        "    for i in range(n):\n        yield i * i\n",
        "\n\ndef check(candidate):\n    assert list(candidate(4)) == [0, 1, 4, 9]\n"
        "    assert sorted(candidate(3), reverse=True) == [4, 1, 0]\n    assert set(candidate(3)) == {0, 1, 4}\n"
        "    assert sum(candidate(10)) == 285\n    assert len(list(candidate(0))) == 0\n"
        "    assert max(candidate(5)) == 16\n    assert [x for x in candidate(3)] == [0, 1, 4]\n",
        "squares_upto",
        [
            ("    return [i * i for i in range(1, n + 1)]\n", "wrong"),
            ("    return None\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_string_methods_on_result",
        f"def make_palindrome(string: str) -> str:\n    {T} Shortest palindrome that begins with string. {T}\n",
        "    if not string:\n        return ''\n    beginning_of_suffix = 0\n"
        "    while string[beginning_of_suffix:] != string[beginning_of_suffix:][::-1]:\n        beginning_of_suffix += 1\n"
        "    return string + string[:beginning_of_suffix][::-1]\n",
        "\n\ndef check(candidate):\n    assert candidate('') == ''\n    assert candidate('x') == 'x'\n"
        "    assert candidate('xyz') == 'xyzyx'\n    assert candidate('xyx') == 'xyx'\n"
        "    assert candidate('jerry') == 'jerryrrej'\n    assert candidate('cat').startswith('cat')\n"
        "    assert candidate('cata').upper() == 'CATAC'\n    assert candidate('ab')[::-1] == candidate('ab')\n"
        "    assert len(candidate('abc')) == 5 and candidate('abc')[2] == 'c'\n",
        "make_palindrome",
        [("    return string + string[::-1]\n", "wrong"), ("    return list(string)\n", "wrong")],
    )
)

add(
    he(
        "he_dict_and_none",
        f"def char_stats(s: str):\n    {T} None for an empty string, else a dict char -> count plus a set of vowels seen. {T}\n",
        "    if not s:\n        return None\n    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n"
        "    return d, {c for c in s if c in 'aeiou'}\n",
        "\n\ndef check(candidate):\n    assert candidate('') is None\n"
        "    counts, vowels = candidate('banana')\n    assert counts == {'b': 1, 'a': 3, 'n': 2}\n"
        "    assert vowels == {'a'}\n    assert candidate('xyz')[1] == set()\n    assert isinstance(candidate('q')[0], dict)\n",
        "char_stats",
        [
            (
                "    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n    return d, {c for c in s if c in 'aeiou'}\n",
                "wrong",
            ),
            (
                "    import collections\n    if not s:\n        return None\n"
                "    return collections.Counter(s), [c for c in s if c in 'aeiou']\n",
                "wrong",
            ),
        ],
    )
)

add(
    he(
        "he_expects_exception",  # the test expects a ValueError via try/except
        f"def safe_sqrt(x: float) -> float:\n    {T} Square root; ValueError for negative x. {T}\n",
        "    if x < 0:\n        raise ValueError('negative input')\n    return x ** 0.5\n",
        "\n\ndef check(candidate):\n    import math\n    assert math.isclose(candidate(2.0), math.sqrt(2.0))\n"
        "    assert candidate(0) == 0\n    try:\n        candidate(-1)\n        raised = False\n"
        "    except ValueError:\n        raised = True\n    assert raised, 'expected ValueError'\n"
        "    try:\n        candidate(-4.0)\n    except ValueError as exc:\n        assert 'negative' in str(exc)\n"
        "    else:\n        assert False, 'no exception'\n",
        "safe_sqrt",
        [
            ("    return abs(x) ** 0.5\n", "wrong"),
            ("    if x < 0:\n        raise TypeError('negative')\n    return x ** 0.5\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_custom_exception_subclass",  # a solution-defined subclass of ValueError is still a ValueError
        f"class ParseError(ValueError):\n    pass\n\n\ndef parse_int(s: str) -> int:\n"
        f"    {T} Parse a decimal integer; raise ParseError (a ValueError) otherwise. {T}\n",
        "    s = s.strip()\n    if not s.lstrip('-').isdigit():\n        raise ParseError(f'not a number: {s!r}')\n"
        "    return int(s)\n",
        "\n\ndef check(candidate):\n    assert candidate(' 42 ') == 42\n    assert candidate('-7') == -7\n"
        "    for bad in ['', 'x1', '1.5']:\n        try:\n            candidate(bad)\n        except ValueError:\n"
        "            continue\n        assert False, bad\n",
        "parse_int",
        [("    return int(float(s))\n", "wrong")],
    )
)

add(
    he(
        "he_helper_in_test",  # helper function and import math defined in the test code
        f"def triangle_area(a, b, c):\n    {T} Area rounded to 2 decimals, or -1 if not a triangle. {T}\n",
        "    if a + b <= c or a + c <= b or b + c <= a:\n        return -1\n    s = (a + b + c) / 2\n"
        "    area = (s * (s - a) * (s - b) * (s - c)) ** 0.5\n    return round(area, 2)\n",
        "\nimport math\n\n\ndef _heron(a, b, c):\n    s = (a + b + c) / 2\n    return math.sqrt(s * (s - a) * (s - b) * (s - c))\n\n\n"
        "def check(candidate):\n    for a, b, c in [(3, 4, 5), (10, 5, 7), (4, 8, 5), (2, 2, 2), (1, 2, 3), (1, 1, 1)]:\n"
        "        if a + b <= c or a + c <= b or b + c <= a:\n            assert candidate(a, b, c) == -1\n"
        "        else:\n            assert abs(candidate(a, b, c) - round(_heron(a, b, c), 2)) < 1e-9, (a, b, c)\n"
        "    assert candidate(1, 2, 10) == -1\n",
        "triangle_area",
        [
            (
                "    s = (a + b + c) / 2\n    return round((s * (s - a) * (s - b) * (s - c)) ** 0.5, 2)\n",
                "wrong",
            ),
            ("    return -1\n", "wrong"),
        ],
    )
)

add(
    he(
        "he_float_list",
        f"from typing import List\n\n\ndef rescale_to_unit(numbers: List[float]) -> List[float]:\n"
        f"    {T} Linear transform so the smallest becomes 0 and the largest 1. {T}\n",
        "    lo, hi = min(numbers), max(numbers)\n    return [(x - lo) / (hi - lo) for x in numbers]\n",
        "\n\ndef check(candidate):\n    assert candidate([2.0, 49.9]) == [0.0, 1.0]\n    assert candidate([100.0, 49.9]) == [1.0, 0.0]\n"
        "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0]) == [0.0, 0.25, 0.5, 0.75, 1.0]\n"
        "    assert candidate([2.0, 1.0, 5.0, 3.0, 4.0]) == [0.25, 0.0, 1.0, 0.5, 0.75]\n",
        "rescale_to_unit",
        [
            ("    hi = max(numbers)\n    return [x / hi for x in numbers]\n", "wrong"),
            (
                "    lo, hi = min(numbers), max(numbers)\n    return [(x - lo) // (hi - lo) for x in numbers]\n",
                "wrong",
            ),
        ],
    )
)

add(
    he(
        "he_slow_but_fine",  # about a second of CPU in the candidate
        f"def count_primes(n: int) -> int:\n    {T} Number of primes below n, by trial division. {T}\n",
        "    count = 0\n    for k in range(2, n):\n        d = 2\n        while d * d <= k:\n            if k % d == 0:\n"
        "                break\n            d += 1\n        else:\n            count += 1\n    return count\n",
        "\n\ndef check(candidate):\n    assert candidate(10) == 4\n    assert candidate(2) == 0\n"
        "    assert candidate(150000) == 13848\n",
        "count_primes",
        [
            (
                "    return sum(1 for k in range(2, n + 1) if all(k % d for d in range(2, int(k ** 0.5) + 1)))\n",
                "wrong",
            ),
            ("    while True:\n        pass\n", "wrong"),  # out of time: graded, not masked
        ],
    )
)

add(
    he(
        "he_typing_full_fence",  # a chat model rewrites the whole function, imports included, plus debug prints
        f"from typing import List\n\n\ndef below_threshold(l: List[int], t: int) -> bool:\n"
        f"    {T} True if every number in l is below t. {T}\n",
        "    return all(x < t for x in l)\n",
        "\n\ndef check(candidate):\n    assert candidate([1, 2, 4, 10], 100)\n    assert not candidate([1, 20, 4, 10], 5)\n"
        "    assert candidate([1, 20, 4, 10], 21)\n    assert candidate([1, 20, 4, 10], 22)\n"
        "    assert candidate([1, 8, 4, 10], 11)\n    assert not candidate([1, 8, 4, 10], 10)\n",
        "below_threshold",
        [("    return all(x <= t for x in l)\n", "wrong"), ("    return 'yes'\n", "wrong")],
        good="Sure! Let me think step by step.\n\n```python\nfrom typing import List\n\n"
        "def below_threshold(l: List[int], t: int) -> bool:\n    for x in l:\n        print('checking', x)\n"
        "        if x >= t:\n            return False\n    return True\n\n\nif __name__ == '__main__':\n"
        "    import sys\n    data = sys.stdin.read().split()\n    print(below_threshold(list(map(int, data[1:])), int(data[0])))\n"
        "```\n\nThe function prints each element for debugging.",
    )
)


# ---- MBPP style ---------------------------------------------------------------------------------
def mbpp(name, code, tests, bad, setup="", imports=None, prose=True):
    ref = {"tests": tests}
    if setup:
        ref["test_setup_code"] = setup
    if imports:
        ref["test_imports"] = imports
    return {
        "name": name,
        "kind": "mbpp",
        "ref": ref,
        "good": fence(code) if prose else code,
        "bad": [(fence(b), s) for b, s in bad],
    }


add(
    mbpp(
        "mbpp_first_repeated_char",
        "def first_repeated_char(str1):\n  for index,c in enumerate(str1):\n    if str1[:index+1].count(c) > 1:\n"
        '      return c\n  return "None"',
        [
            'assert first_repeated_char("abcabc") == "a"',
            'assert first_repeated_char("abc") == "None"',
            'assert first_repeated_char("123123") == "1"',
        ],
        [
            (
                "def first_repeated_char(str1):\n  for c in str1:\n    if str1.count(c) > 1:\n      return c\n  return None",
                "wrong",
            )
        ],
    )
)

add(
    mbpp(
        "mbpp_tuple_set_results",
        "def find_tuples(test_list, K):\n  res = [sub for sub in test_list if all(ele % K == 0 for ele in sub)]\n"
        "  return res",
        [
            "assert find_tuples([(6, 24, 12), (7, 9, 6), (12, 18, 21)], 6) == [(6, 24, 12)]",
            "assert find_tuples([(5, 25, 30), (4, 2, 3), (7, 8, 9)], 5) == [(5, 25, 30)]",
            "assert set(map(tuple, find_tuples([(7, 9, 16), (8, 16, 4), (19, 17, 18)], 4))) == {(8, 16, 4)}",
        ],
        [
            (
                "def find_tuples(test_list, K):\n  return [list(s) for s in test_list if all(e % K == 0 for e in s)]",
                "wrong",
            )
        ],
    )
)

add(
    mbpp(
        "mbpp_isclose",
        "import math\ndef volume_sphere(r):\n  volume=(4/3)*math.pi*r*r*r\n  return volume",
        [
            "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
            "assert math.isclose(volume_sphere(25), 65449.84694978735, rel_tol=0.001)",
            "assert math.isclose(volume_sphere(20), 33510.32163829113, rel_tol=0.001)",
        ],
        [
            ("import math\ndef volume_sphere(r):\n  return (4/3)*math.pi*r*r", "wrong"),
            ("def volume_sphere(r):\n  return str(4188.79)", "wrong"),
        ],
        imports=["import math"],
    )
)

add(
    mbpp(
        "mbpp_setup_code",  # test_setup_code defines data the asserts use
        "def count_pos(list):\n  num_count = 0\n  for num in list:\n    if num >= 0:\n      num_count += 1\n  return num_count",
        [
            "assert count_pos(data_a) == 2",
            "assert count_pos(data_b) == 3",
            "assert count_pos([1,2,3,4]) == 4",
        ],
        [("def count_pos(list):\n  return sum(1 for n in list if n > 0)", "wrong")],
        setup="data_a = [1, -2, 3, -4]\ndata_b = [3, 0, 5, -1]\n",
    )
)

add(
    mbpp(
        "mbpp_class_solution",  # the solution defines a class; the tests build instances of it
        "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n"
        "        return self\n    def pop(self):\n        return self.items.pop()\n    def size(self):\n"
        "        return len(self.items)\n    def __len__(self):\n        return len(self.items)\n\n"
        "def reverse_with_stack(seq):\n    s = Stack()\n    for x in seq:\n        s.push(x)\n"
        "    return [s.pop() for _ in range(s.size())]",
        [
            "assert reverse_with_stack([1, 2, 3]) == [3, 2, 1]",
            "assert Stack().push(1).push(2).size() == 2",
            "assert len(Stack().push(5)) == 1",
            "assert Stack().push('a').push('b').pop() == 'b'",
            "assert Stack().push(3).items == [3]",
        ],
        [
            (
                "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
                "        self.items.insert(0, x)\n        return self\n    def pop(self):\n        return self.items.pop()\n"
                "    def size(self):\n        return len(self.items)\n    def __len__(self):\n        return len(self.items)\n"
                "def reverse_with_stack(seq):\n    return list(seq)",
                "wrong",
            )
        ],
    )
)

add(
    mbpp(
        "mbpp_map_object",
        "def add_list(nums1,nums2):\n  result = map(lambda x, y: x + y, nums1, nums2)\n  return list(result)",
        [
            "assert add_list([1, 2, 3],[4,5,6])==[5, 7, 9]",
            "assert add_list([1,2],[3,4])==[4,6]",
            "assert add_list([10,20],[50,70])==[60,90]",
        ],
        [
            ("def add_list(nums1,nums2):\n  return map(lambda x, y: x + y, nums1, nums2)", "wrong"),
            ("def add_list(nums1,nums2):\n  return [x - y for x, y in zip(nums1, nums2)]", "wrong"),
        ],
    )
)

add(
    mbpp(
        "mbpp_float_round",
        "def average_tuple(nums):\n    result = [sum(x) / len(x) for x in zip(*nums)]\n    return result",
        [
            "assert average_tuple(((10, 10, 10, 12), (30, 45, 56, 45), (81, 80, 39, 32), (1, 2, 3, 4)))==[30.5, 34.25, 27.0, 23.25]",
            "assert average_tuple(((1, 1, -5), (30, -15, 56), (81, -60, -39), (-10, 2, 3)))== [25.5, -18.0, 3.75]",
        ],
        [("def average_tuple(nums):\n    return [sum(x) // len(x) for x in zip(*nums)]", "wrong")],
    )
)

add(
    mbpp(
        "mbpp_dict_counter",  # a Counter result equals a dict
        "from collections import Counter\ndef freq_count(list1):\n  freq_count= Counter(list1)\n  return freq_count",
        [
            "assert freq_count([10,10,10,10,20,20,20,20,40,40,50,50,30])==({10: 4, 20: 4, 40: 2, 50: 2, 30: 1})",
            "assert freq_count([1,2,3,4,3,2,4,1,3,1,4])==({1:3, 2:2,3:3,4:3})",
        ],
        [("def freq_count(list1):\n  return {x: 1 for x in list1}", "wrong")],
    )
)

add(
    mbpp(
        "mbpp_bool_and_none",
        "def check_none(test_tup):\n  res = any(map(lambda ele: ele is None, test_tup))\n  return res",
        [
            "assert check_none((10, 4, 5, 6, None)) == True",
            "assert check_none((7, 8, 9, 11, 14)) == False",
            "assert check_none((1, 2, 3, 4, None)) == True",
        ],
        [
            ("def check_none(test_tup):\n  return str(None in test_tup)", "wrong"),
            ("def check_none(test_tup):\n  pass", "wrong"),
        ],
    )
)

add(
    mbpp(
        "mbpp_bare_code_no_fence",
        "def is_not_prime(n):\n    if n < 2:\n        return True\n    for i in range(2, int(n ** 0.5) + 1):\n"
        "        if n % i == 0:\n            return True\n    return False\n",
        [
            "assert is_not_prime(2) == False",
            "assert is_not_prime(10) == True",
            "assert is_not_prime(35) == True",
            "assert is_not_prime(37) == False",
        ],
        [
            ("def is_not_prime(n):\n    return n % 2 == 0", "wrong"),
            ("def is_not_prime(n):\n    raise ValueError(n)", "wrong"),
        ],
        prose=False,
    )
)

add(
    mbpp(
        "mbpp_nested_lists",
        "def sort_sublists(list1):\n    return [sorted(x) for x in list1]",
        [
            "assert sort_sublists([['green', 'orange'], ['black', 'white'], ['white', 'black', 'orange']])==[['green', 'orange'], ['black', 'white'], ['black', 'orange', 'white']]",
            "assert sort_sublists([[' red ','green'],['blue ',' black'],[' orange','brown']])==[[' red ', 'green'], [' black', 'blue '], [' orange', 'brown']]",
        ],
        [("def sort_sublists(list1):\n    return sorted(list1)", "wrong")],
    )
)

add(
    mbpp(
        "mbpp_string_result_methods",
        "import re\ndef remove_extra_spaces(text):\n  return re.sub(' +', ' ', text)",
        [
            "assert remove_extra_spaces('Google      Assistant') == 'Google Assistant'",
            "assert remove_extra_spaces('Quad      Core').split() == ['Quad', 'Core']",
            "assert remove_extra_spaces('ChromeCast      Built-in').count(' ') == 1",
        ],
        [("def remove_extra_spaces(text):\n  return text.replace('  ', ' ')", "wrong")],
    )
)

add(
    mbpp(
        "mbpp_multiple_fences",  # prose, an example block, then the solution block
        "def max_of_three(a, b, c):\n    return max(a, b, c)",
        [
            "assert max_of_three(10,20,30)==30",
            "assert max_of_three(55,47,39)==55",
            "assert max_of_three(10,49,30)==49",
        ],
        [("def max_of_three(a, b, c):\n    return min(a, b, c)", "wrong")],
    )
)
PROBLEMS[-1]["good"] = (
    "First, an example of use:\n```python\nprint(max_of_three(1, 2, 3))\n```\n"
    "Now the implementation:\n```python\ndef max_of_three(a, b, c):\n    return max(a, b, c)\n```\n"
    "Hope that helps!"
)

add(
    mbpp(
        "mbpp_big_ints_and_bytes",
        "def big_pow(a, b):\n    return a ** b\n\ndef to_bytes(s):\n    return s.encode('utf-8')",
        [
            "assert big_pow(2, 100) == 1267650600228229401496703205376",
            "assert big_pow(-3, 41) == -36472996377170786403",
            "assert to_bytes('hé') == b'h\\xc3\\xa9'",
        ],
        [
            (
                "def big_pow(a, b):\n    return float(a) ** b\n\ndef to_bytes(s):\n    return s.encode('utf-8')",
                "wrong",
            )
        ],
    )
)

# ---- LiveCodeBench functional style (class Solution) -----------------------------------------------
LCB_PROMPT = (
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
)
LCB_GOOD = (
    "```python\nfrom typing import List\n\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    "                return [seen[target - x], i]\n            seen[x] = i\n        return []\n```"
)
LCB_BAD = LCB_GOOD.replace("[seen[target - x], i]", "[i, seen[target - x]]")
add(
    {
        "name": "lcb_solution_method_test",
        "kind": "lcb",
        "ref": {
            "prompt": LCB_PROMPT,
            "entry_point": "Solution().twoSum",
            "test": "def check(candidate):\n    assert candidate([2, 7, 11, 15], 9) == [0, 1]\n"
            "    assert candidate([3, 2, 4], 6) == [1, 2]\n    assert candidate([3, 3], 6) == [0, 1]\n",
        },
        "good": LCB_GOOD,
        "bad": [
            (LCB_BAD, "wrong"),
            (LCB_GOOD.replace("return []", "return []\n    x = 1 +"), "wrong"),
        ],
    }
)
add(
    {
        "name": "lcb_solution_asserts",
        "kind": "lcb",
        "ref": {
            "tests": [
                "assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]",
                "assert Solution().twoSum([3, 3], 6) == [0, 1]",
            ]
        },
        "good": LCB_GOOD,
        "bad": [(LCB_BAD, "wrong")],
    }
)


# ---- stdin/stdout (APPS, CodeContests) --------------------------------------------------------------
def io(name, program, cases, bad, **extra):
    return {
        "name": name,
        "kind": "io",
        "ref": {"io": cases, **extra},
        "good": fence(program),
        "bad": [(fence(b), s) for b, s in bad],
    }


add(
    io(
        "io_multi_testcase",
        "import sys\ndef main():\n    data = sys.stdin.read().split()\n    t = int(data[0])\n    pos = 1\n    out = []\n"
        "    for _ in range(t):\n        n = int(data[pos]); pos += 1\n        arr = list(map(int, data[pos:pos + n])); pos += n\n"
        "        out.append(str(max(arr) - min(arr)))\n    print('\\n'.join(out))\n\nif __name__ == '__main__':\n    main()\n",
        [
            {"stdin": "3\n3\n1 2 3\n1\n5\n4\n-1 10 2 2\n", "stdout": "2\n0\n11\n"},
            {"stdin": "1\n2\n7 7", "stdout": "0"},
        ],
        [
            ("import sys\ndata = sys.stdin.read().split()\nprint(max(map(int, data)))", "wrong"),
            ("def main():\n    pass\nif __name__ == '__main__':\n    main()", "wrong"),
        ],
    )
)

add(
    io(
        "io_input_loop_trailing_space",
        "t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(a + b, end=' \\n')\n",
        [
            {"stdin": "2\n1 2\n3 4\n", "stdout": "3\n7\n"},
            {"stdin": "1\n-5 5\n", "stdout": "0 \n\n\n"},
        ],
        [
            (
                "t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(a * b)",
                "wrong",
            ),
            (
                "t = int(input())\nfor _ in range(t + 1):\n    a, b = map(int, input().split())\n    print(a + b)",
                "wrong",
            ),
        ],
    )
)

_N = 200000
add(
    io(
        "io_large_input",  # 200k numbers in, fast reading via sys.stdin.buffer
        "import sys\ninput = sys.stdin.buffer.readline\nn = int(input())\na = list(map(int, input().split()))\n"
        "pref = 0\nbest = -10**18\ncur = 0\nfor x in a:\n    cur = max(x, cur + x)\n    best = max(best, cur)\nprint(best)\n",
        [
            {
                "stdin": f"{_N}\n"
                + " ".join(str((i * 7919) % 2001 - 1000) for i in range(_N))
                + "\n",
                "stdout": None,
            }
        ],  # filled in by the test from a reference computation
        [("n = int(input())\na = list(map(int, input().split()))\nprint(sum(a))", "wrong")],
    )
)

add(
    io(
        "io_float_output",
        "import math\nr = float(input())\nprint('%.6f' % (math.pi * r * r))\n",
        [{"stdin": "1\n", "stdout": "3.141593\n"}, {"stdin": "2.5\n", "stdout": "19.634954\n"}],
        [("r = float(input())\nprint(3.14 * r * r)", "wrong")],
        float_tol=1e-6,
    )
)

add(
    io(
        "io_deep_recursion_thread",  # the usual competitive-programming trick for deep DFS
        "import sys, threading\nsys.setrecursionlimit(1 << 25)\nthreading.stack_size(1 << 26)\n"
        "def main():\n    n = int(sys.stdin.readline())\n    def depth(k):\n        return 0 if k == 0 else 1 + depth(k - 1)\n"
        "    print(depth(n))\nt = threading.Thread(target=main)\nt.start()\nt.join()\n",
        [{"stdin": "20000\n", "stdout": "20000\n"}],
        [("import sys\nn = int(sys.stdin.readline())\nprint(n - 1)", "wrong")],
    )
)

add(
    io(
        "io_stderr_debug_and_yes_no",
        "import sys\nfor line in sys.stdin:\n    line = line.strip()\n    if not line:\n        continue\n"
        "    print('debug:', line, file=sys.stderr)\n    print('YES' if line == line[::-1] else 'NO')\n",
        [{"stdin": "abba\nabc\nx\n", "stdout": "YES\nNO\nYES\n"}],
        [
            ("import sys\nfor line in sys.stdin:\n    print('yes')", "wrong"),
            ("import sys\nprint('YES\\nNO\\nYES')\nsys.exit(1)", "wrong"),
        ],
    )
)

add(
    io(
        "io_crlf_input",
        "n = int(input())\nprint(' '.join(str(i * i) for i in range(1, n + 1)))\n",
        [{"stdin": "3\r\n", "stdout": "1 4 9\r\n"}, {"stdin": "1", "stdout": "1"}],
        [("n = int(input())\nprint(' '.join(str(i * i) for i in range(n)))", "wrong")],
    )
)
