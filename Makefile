# Every target makes or refreshes the local virtual environment from pyproject.toml first,
# so a fresh clone needs nothing but Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test test-ray lint gate baseline bench bench-gate bench-icount bench-icount-gate bench-fidelity \
	soak bench-recorder probe-sdk probe-claude probe-codex codex-turn probe-qwen report-check docs clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/toolturn run scenarios/default.toml

test: $(STAMP)
	$(BIN)/python -m pytest

# The Ray backend (toolturn run --backend ray) on a real local Ray: the ray extra (a large wheel, so
# not part of the dev install) is installed into the venv, then its test runs.
test-ray: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,ray]'
	$(BIN)/python -m pytest tests/engine/test_backend_ray.py

# Lint (ruff: pycodestyle, pyflakes, bugbear, import order, pyupgrade, ruff's own, complexity)
# and type check (mypy --strict on toolturn/), both configured in pyproject.toml.
lint: $(STAMP)
	$(BIN)/ruff check toolturn tests bench
	$(BIN)/mypy

# The exact simulated-metric gate: small seeded runs compared with the committed baselines.
# Simulated metrics are exact functions of code, scenario and seed, so any change fails here;
# after an intended change of behaviour, `make baseline` rewrites them (commit the result).
BASELINE_SCENARIOS := default interrupt_storm fallback_storm overload fine_grained_tools resume_storm
BASELINE_SESSIONS := 40
BASELINE_DIR := results/baseline

gate: $(STAMP)
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
	for name in $(BASELINE_SCENARIOS); do \
		$(BIN)/toolturn run scenarios/$$name.toml --sessions $(BASELINE_SESSIONS) \
			--no-report --out "$$scratch/$$name" > /dev/null || exit 1; \
		$(BIN)/toolturn compare $(BASELINE_DIR)/$$name "$$scratch/$$name" || exit 1; \
	done && echo "gate: $(words $(BASELINE_SCENARIOS)) scenarios match $(BASELINE_DIR) exactly"

baseline: $(STAMP)
	for name in $(BASELINE_SCENARIOS); do \
		$(BIN)/toolturn run scenarios/$$name.toml --sessions $(BASELINE_SESSIONS) \
			--no-report --out $(BASELINE_DIR)/$$name --force > /dev/null || exit 1; \
	done

# The benchmarks alone, with the in-run ratios against their references (the SDK, the bare runtime).
# Each run is saved as pytest-benchmark JSON under BENCH_STORAGE (.benchmarks/, ignored by git:
# --benchmark-autosave); `make bench COMPARE=0001` compares this run with saved run 0001 (see
# `.venv/bin/pytest-benchmark list`), and BENCH_FLAGS passes more pytest flags (-k, ...).
BENCH_STORAGE ?= .benchmarks
COMPARE ?=
BENCH_FLAGS ?=
bench: $(STAMP)
	$(BIN)/python -m pytest bench --benchmark-only -o python_files='bench_*.py' \
		--benchmark-storage='$(BENCH_STORAGE)' --benchmark-autosave \
		$(if $(COMPARE),--benchmark-compare=$(COMPARE)) $(BENCH_FLAGS)

# The simulator's fidelity on the default scenario: `toolturn fidelity` at speed 10 (10 sessions)
# and at speed 1 (20 sessions), verdicts recorded in bench/fidelity_default.json. Real time: ten
# minutes or more; exit 4 in the record means the host, not the simulator, was measured.
bench-fidelity: $(STAMP)
	$(BIN)/python bench/fidelity.py

# The wall-clock gate: this tree against BASE (default HEAD), both measured now on this machine.
# GATE_JSON=DIR keeps both runs' pytest-benchmark JSON (base.json, new.json) in DIR;
# GATE_SUMMARY=FILE appends the table as Markdown (in CI: "$$GITHUB_STEP_SUMMARY").
BASE ?= HEAD
GATE_JSON ?=
GATE_SUMMARY ?=
bench-gate: $(STAMP)
	$(BIN)/python bench/gate.py --base $(BASE) $(if $(GATE_JSON),--json-dir '$(GATE_JSON)') \
		$(if $(GATE_SUMMARY),--markdown '$(GATE_SUMMARY)')

# Instructions per stream event of the engine, the bare runtime and the mock model (callgrind:
# deterministic where wall time is not; needs valgrind; takes a few minutes).
bench-icount: $(STAMP)
	$(BIN)/python bench/icount.py

# The same counts for a checkout of BASE (default HEAD) and this tree: fails when a part's count
# grew by more than 2% (they repeat within half a percent). Twice as long as bench-icount.
bench-icount-gate: $(STAMP)
	$(BIN)/python bench/icount.py --base $(BASE)

# The server soak: toolturn serve on loopback under valid, invalid, slow, disconnecting and idle
# clients for SOAK_SECONDS; fails on a hang, an unexpected answer, growing memory or leaked
# descriptors (bench/soak_server.py). Not part of `make test`.
SOAK_SECONDS ?= 120
soak: $(STAMP)
	$(BIN)/python bench/soak_server.py --seconds $(SOAK_SECONDS)

# The recorder under a steady load: toolturn serve --record for RECORDER_MINUTES with
# RECORDER_CLIENTS scripted clients running new sessions; fails unless the server's memory stays
# within 10% after the first minute and a flush takes as long at the end as at the start
# (bench/recorder_memory.py). Not part of `make test`.
RECORDER_MINUTES ?= 20
RECORDER_CLIENTS ?= 32
bench-recorder: $(STAMP)
	$(BIN)/python bench/recorder_memory.py --minutes $(RECORDER_MINUTES) --clients $(RECORDER_CLIENTS)

# The probe suite (scenarios/probes) against the official SDKs' plain agent in every protocol
# (anthropic on the anthropic SDK; openai-responses and openai-chat on the openai SDK), all four
# ways each can stream; scorecards and recordings under results/probe-sdk-PROTOCOL-MODE.
PROBE_PROTOCOLS ?= anthropic openai-responses openai-chat
probe-sdk: $(STAMP)
	for protocol in $(PROBE_PROTOCOLS); do \
		for mode in sync-stream sync-create async-stream async-create; do \
			$(BIN)/toolturn probe --protocol $$protocol \
				--out results/probe-sdk-$$protocol-$$mode -- $(BIN)/python -m \
				toolturn.probe.sdk_agent --protocol $$protocol --mode $$mode || exit 1; \
		done; \
	done

# The probe suite against the real Claude Code CLI, installed from the npm registry into
# .probe-claude/ (ignored by git; needs node and npm). Not part of `make test`: it takes a few
# minutes. CLAUDE_CODE_VERSION picks another release; PROBE_REPEAT runs each case that many
# times (races are rates); the scorecard goes to results/probe-claude (`toolturn report` draws
# it, `toolturn probe compare` compares it with an older one). The CLI prints its session as
# stream-json: each run's stdout.txt is the agent's own account, which the scorecard's `account`
# column sets beside the recording.
# A CLI of one's own installs nothing, neither the CLI nor the venv (BIN must then hold toolturn):
#   make probe-claude CLAUDE=/path/to/claude BIN=/path/to/venv/bin
CLAUDE_CODE_VERSION ?= 2.1.337
CLAUDE_DIR := .probe-claude
PROBE_PROMPT ?= Look at this project with your tools, then say what it is.
PROBE_REPEAT ?= 1
PROBE_OUT ?= results/probe-claude
ifdef CLAUDE
PROBE_CLAUDE_NEEDS :=
else
CLAUDE := $(CLAUDE_DIR)/node_modules/.bin/claude
PROBE_CLAUDE_NEEDS := $(STAMP) $(CLAUDE_DIR)/.installed-$(CLAUDE_CODE_VERSION)
endif

$(CLAUDE_DIR)/.installed-$(CLAUDE_CODE_VERSION):
	npm install --prefix $(CLAUDE_DIR) --no-save --no-audit --no-fund \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	touch $@

probe-claude: $(PROBE_CLAUDE_NEEDS)
	$(CLAUDE) --version
	$(BIN)/toolturn probe --out $(PROBE_OUT) --repeat $(PROBE_REPEAT) -- \
		$(CLAUDE) -p "$(PROBE_PROMPT)" --output-format stream-json --verbose

# The probe suite against the real Codex CLI (`codex exec`, which speaks only the Responses API),
# installed from the npm registry into .probe-codex/ (ignored by git; needs node and npm). Not
# part of `make test`. `--protocol openai-responses` points OPENAI_BASE_URL at each case's
# server's /v1, with a dummy OPENAI_API_KEY; the command hands it to Codex as a model provider
# of wire_api "responses" (no websockets). CODEX_SANDBOX is Codex's own sandbox for the
# commands it runs (read-only, as `codex exec` has it; its bundled bubblewrap needs /dev/full, and in a container without it
# every command fails: danger-full-access runs them unsandboxed, and the probe's calls only
# read). A CLI of one's own installs nothing: make probe-codex CODEX=/path/to/codex BIN=...
CODEX_VERSION ?= 0.171.0
CODEX_DIR := .probe-codex
CODEX_MODEL ?= gpt-5
CODEX_SANDBOX ?= read-only
CODEX_OUT ?= results/probe-codex
ifdef CODEX
PROBE_CODEX_NEEDS :=
else
CODEX := $(CODEX_DIR)/node_modules/.bin/codex
PROBE_CODEX_NEEDS := $(STAMP) $(CODEX_DIR)/.installed-$(CODEX_VERSION)
endif
# Read by the `sh -c` script below, inside its double quotes: it expands OPENAI_BASE_URL there.
CODEX_PROVIDER = model_providers.sim={name=\"sim\",base_url=\"$$OPENAI_BASE_URL\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",supports_websockets=false}

$(CODEX_DIR)/.installed-$(CODEX_VERSION):
	npm install --prefix $(CODEX_DIR) --no-save --no-audit --no-fund @openai/codex@$(CODEX_VERSION)
	touch $@

probe-codex: $(PROBE_CODEX_NEEDS)
	$(CODEX) --version
	$(BIN)/toolturn probe --protocol openai-responses --out $(CODEX_OUT) \
		--repeat $(PROBE_REPEAT) -- \
		sh -c 'exec "$$0" exec --skip-git-repo-check -s $(CODEX_SANDBOX) -m $(CODEX_MODEL) \
			-c model_provider=sim -c "$(CODEX_PROVIDER)" "$$1"' \
		"$(abspath $(CODEX))" "$(PROBE_PROMPT)"

# One plain `toolturn serve` session of a shipped scenario with the real Codex CLI (the
# invocation of docs/protocols.md, in a fresh HOME and a folder of its own), then a check of its
# recording (`python -m toolturn.wire.tool_turns`): the target fails unless Codex completed a
# tool turn on the Responses API, a function_call answered by a function_call_output the
# server took (no 400). Outside `make test`, like probe-codex, and with the same CODEX,
# CODEX_VERSION, CODEX_MODEL and CODEX_SANDBOX. The server listens on a free loopback port
# (read from its first log line) and is stopped (SIGTERM, by its own pid: a background job
# ignores SIGINT) when Codex is done, which flushes the recording.
# Recording, server log and Codex's output: CODEX_TURN_OUT.
CODEX_TURN_SCENARIO ?= default
CODEX_TURN_OUT ?= results/codex-turn
CODEX_TURN_TIMEOUT ?= 300
codex-turn: $(PROBE_CODEX_NEEDS)
	$(CODEX) --version
	rm -rf $(CODEX_TURN_OUT) && mkdir -p $(CODEX_TURN_OUT)/home $(CODEX_TURN_OUT)/work
	printf 'print("hello")\n' > $(CODEX_TURN_OUT)/work/app.py
	out="$(abspath $(CODEX_TURN_OUT))"; \
	$(BIN)/toolturn serve $(CODEX_TURN_SCENARIO) --port 0 --speed 10 --record "$$out/recording" \
		--client-dir "$$out/work" 2> "$$out/serve.log" & server=$$!; \
	for i in $$(seq 300); do grep -q 'listening on' "$$out/serve.log" && break; \
		kill -0 $$server 2> /dev/null || break; sleep 0.2; done; \
	url=$$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$$out/serve.log"); \
	[ -n "$$url" ] || { cat "$$out/serve.log"; kill $$server; exit 1; }; \
	echo "toolturn serve at $$url, Codex in $$out/work"; \
	(cd "$$out/work" && HOME="$$out/home" OPENAI_API_KEY=dummy timeout $(CODEX_TURN_TIMEOUT) \
		"$(abspath $(CODEX))" exec --skip-git-repo-check -s $(CODEX_SANDBOX) -m $(CODEX_MODEL) \
		-c model_provider=sim -c "model_providers.sim={name=\"sim\",base_url=\"$$url/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",supports_websockets=false}" \
		"$(PROBE_PROMPT)" > "$$out/codex.out" 2>&1); status=$$?; \
	kill $$server; wait $$server; \
	tail -n 3 "$$out/codex.out"; echo "codex exit status $$status"
	$(BIN)/python -m toolturn.wire.tool_turns $(CODEX_TURN_OUT)/recording --protocol openai-responses

# The probe suite against a Chat Completions agent: Qwen Code (npm @qwen-code/qwen-code, its
# OpenAI auth type), installed into .probe-qwen/ unless QWEN=/path/to/qwen is given, probed with
# `--protocol openai-chat`: its base URL is the case's server's /v1 (OPENAI_BASE_URL), a dummy
# key, every tool approved (the calls are the harmless built-in ones). Not part of `make test`. Scorecard: results/probe-qwen.
QWEN_VERSION ?= 0.24.4
QWEN_DIR := .probe-qwen
QWEN_OUT ?= results/probe-qwen
ifdef QWEN
PROBE_QWEN_NEEDS :=
else
QWEN := $(QWEN_DIR)/node_modules/.bin/qwen
PROBE_QWEN_NEEDS := $(STAMP) $(QWEN_DIR)/.installed-$(QWEN_VERSION)
endif

$(QWEN_DIR)/.installed-$(QWEN_VERSION):
	npm install --prefix $(QWEN_DIR) --no-save --no-audit --no-fund @qwen-code/qwen-code@$(QWEN_VERSION)
	touch $@

probe-qwen: $(PROBE_QWEN_NEEDS)
	$(QWEN) --version
	QWEN_CODE_SUPPRESS_YOLO_WARNING=1 $(BIN)/toolturn probe --protocol openai-chat \
		--out $(QWEN_OUT) --repeat $(PROBE_REPEAT) -- \
		sh -c 'exec "$$0" --auth-type openai --openai-base-url "$$OPENAI_BASE_URL" \
			--openai-api-key "$$OPENAI_API_KEY" -m gpt-4o --approval-mode yolo "$$1"' \
		"$(abspath $(QWEN))" "$(PROBE_PROMPT)"
# The report page in a real headless browser: a small sweep's report.html opened alone by
# Chromium (Debian's package, installed here if missing; needs root), its figures drawn and
# visible in a screenshot. Outside `make test`: it needs a browser and about a minute.
report-check: $(STAMP)
	command -v chromium > /dev/null || (apt-get update && apt-get install -y chromium)
	$(BIN)/python -m tests.browser.check_report

# The references in docs/reference/ (scenario keys, tables and columns, commands), made from the
# code; tests/docs/test_docs_references.py fails when a committed page is stale.
docs: $(STAMP)
	$(BIN)/python -m toolturn.reference

clean:
	rm -rf $(VENV) results/run-* $(CLAUDE_DIR) $(CODEX_DIR) $(QWEN_DIR)
