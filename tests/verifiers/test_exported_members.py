"""Pin the public API of passband.verifiers: adding or removing a name must be a conscious change."""

import passband.verifiers as verifiers

EXPECTED = {
    # core (lead)
    "Verdict", "get", "names", "register",
    # batch scoring
    "verify_batch",
    # format / exact / json_schema verifiers
    "exact_match", "regex_format", "tag_format", "extract_json", "json_schema_verifier",
    # penalties and composition
    "PenaltyOutcome", "answer_hedging", "length_cap", "length_normalized", "ngram_repetition", "overlong",
    "repeated_paragraphs", "Reward", "register_penalty", "get_penalty", "penalty_names",
    # adapters
    "as_trl_reward", "as_verl_compute_score",
    # math (helper "math")
    "MathConfig", "math_verifier",
    # code (next issue)
    "code_verifier", "extract_code",
}


def test_all_is_pinned():
    assert set(verifiers.__all__) == EXPECTED
    assert len(verifiers.__all__) == len(set(verifiers.__all__)), "duplicate names in __all__"


def test_every_exported_name_exists():
    for name in verifiers.__all__:
        assert hasattr(verifiers, name), name


def test_builtin_verifier_names_are_registered():
    assert {"exact", "regex", "format", "json_schema", "math"} <= set(verifiers.names())


def test_no_torch_import():
    import subprocess
    import sys

    code = "import sys, passband.verifiers, passband.verifiers.testing; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr
