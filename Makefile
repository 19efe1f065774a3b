.PHONY: demo test bootstrap
# Both targets install what they need into .venv first (scripts/bootstrap.sh is idempotent).
bootstrap:
	@bash scripts/bootstrap.sh
demo: bootstrap
	.venv/bin/passband demo
test:
	@bash scripts/bootstrap.sh --vllm
	@bash scripts/ensure_chromium.sh
	.venv/bin/python -m pytest
