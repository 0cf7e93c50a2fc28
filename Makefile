# RunLedger. `make run` and `make test` work on a fresh clone: both create .venv when needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
BQEMULATOR_VENV := .venv-bqemulator
BQEMULATOR_INSTALLED := $(BQEMULATOR_VENV)/.installed
DAGSTER_HOME_DIR := $(CURDIR)/.dagster
FOCUS_CONVERTER_VENV := .venv-focus-converter
FOCUS_CONVERTER_INSTALLED := $(FOCUS_CONVERTER_VENV)/.installed
# The FinOps Foundation's focus-validator needs Python 3.12 or newer (under 3.11 pip picks its 1.0.0):
# the first of python3.12 on PATH and pyenv's 3.12.1 that runs (a pyenv shim may not), or PYTHON312=...
PYTHON312 ?= $(firstword $(foreach python,python3.12 $(HOME)/.pyenv/versions/3.12.1/bin/python3.12,\
	$(shell $(python) -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && echo $(python))))
FOCUS_VALIDATOR_VENV := .venv-focus-validator
FOCUS_VALIDATOR_INSTALLED := $(FOCUS_VALIDATOR_VENV)/.installed
BENCH_SIZES ?= 1M,5M,20M
# pytest-xdist: test files spread over one worker per core, at most 4 (each worker starts its own
# servers; a DuckDB in a test may use 2.5 GiB).
TEST_WORKERS ?= auto

.PHONY: run test test-fast lint test-browser test-postgres test-prometheus test-slurm screenshot dev bench clean

$(INSTALLED): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,lint]'
	touch $(INSTALLED)

# The BigQuery emulator the integration tests start: its own venv (it pins another duckdb).
$(BQEMULATOR_INSTALLED): constraints-bqemulator.txt
	test -x $(BQEMULATOR_VENV)/bin/python || $(PYTHON) -m venv $(BQEMULATOR_VENV)
	$(BQEMULATOR_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-bqemulator.txt \
		bqemulator duckdb duckdb-extension-spatial numpy
	touch $(BQEMULATOR_INSTALLED)

# The FinOps Foundation's focus-converter, the bench's reference: its own venv (it pins polars
# 0.20 and pyarrow < 15).
$(FOCUS_CONVERTER_INSTALLED): constraints-focus-converter.txt
	test -x $(FOCUS_CONVERTER_VENV)/bin/python || $(PYTHON) -m venv $(FOCUS_CONVERTER_VENV)
	$(FOCUS_CONVERTER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-c constraints-focus-converter.txt "focus-converter==1.0.0" "multimethod<2" "click<8.2"
	touch $(FOCUS_CONVERTER_INSTALLED)

# The FinOps Foundation's focus-validator, which tests/integration/test_focus_conformance.py runs on
# the exported demo: its own venv (Python 3.12; it pins numpy < 2, which needs pyarrow < 20).
$(FOCUS_VALIDATOR_INSTALLED): constraints-focus-validator.txt
	@test -n "$(PYTHON312)" || { echo "focus-validator needs Python 3.12 or newer: install it, or name it with PYTHON312=..."; exit 1; }
	test -x $(FOCUS_VALIDATOR_VENV)/bin/python || $(PYTHON312) -m venv $(FOCUS_VALIDATOR_VENV)
	$(FOCUS_VALIDATOR_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-c constraints-focus-validator.txt "focus-validator==2.2.1" "pyarrow<20"
	touch $(FOCUS_VALIDATOR_INSTALLED)

# The Dagster instance `make run` records into and `make dev` shows: its settings are the repo's,
# kept out of the repo root, where `dg dev` starts and would warn that a dagster.yaml there is ignored.
DAGSTER_YAML := pipelines/orchestration/dagster.yaml
$(DAGSTER_HOME_DIR)/dagster.yaml: $(DAGSTER_YAML)
	mkdir -p $(DAGSTER_HOME_DIR)
	cp $(DAGSTER_YAML) $@

DEMO_DIR ?= .

run: $(INSTALLED) $(DAGSTER_HOME_DIR)/dagster.yaml  ## the nightly job on the embedded demo data set, recorded in .dagster/
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) $(BIN)/runledger demo --dir $(DEMO_DIR)

test: $(INSTALLED) $(BQEMULATOR_INSTALLED) $(FOCUS_VALIDATOR_INSTALLED) test-browser test-postgres test-prometheus test-slurm  ## the whole pytest suite: unit, integration and e2e tiers
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile --durations 15

test-fast: $(INSTALLED)  ## the unit tier only: no servers, one worker per core (about 75 s on 2 idle cores)
	$(BIN)/python -m pytest -m unit -n $(TEST_WORKERS) --maxprocesses 4 --durations 10 tests/unit

# ruff (lint and format), sqlfluff (DuckDB's dialect; BigQuery's for the GCP connector's SQL,
# linted from its folder, where its templater settings live) and the import contracts.
lint: $(INSTALLED)  ## linters and import contracts, as CI runs them before the tests
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint sql pipelines/sources bench/sql --processes 2
	cd connectors/gcp/sql && $(CURDIR)/$(BIN)/sqlfluff lint .
	$(BIN)/lint-imports

bench: $(INSTALLED) $(FOCUS_CONVERTER_INSTALLED)  ## the nightly job measured at BENCH_SIZES line items (docs/scaling.md)
	$(BIN)/python -m bench run --sizes $(BENCH_SIZES)

# Debian's chromium opens a report in tests/e2e/test_report_browser.py; installed when missing and
# possible (root, apt-get), else that test is skipped and says why.
test-browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends chromium fonts-liberation >/dev/null; } \
			|| echo "chromium could not be installed: the report browser test will be skipped"; \
		else \
			echo "chromium is missing and installing it needs root and apt-get: the report browser test will be skipped"; \
		fi; }

# The README's picture of a run report, drawn from the demo so that it follows the report's code: the
# demo into a scratch folder, its llm-7b-pt-r1 report opened by Debian's headless chromium (which
# test-browser installs when missing and possible) in a window tall enough for the header, the "why"
# box and the cumulative spend against the budget. Chromium's sandbox refuses root: --no-sandbox then.
SCREENSHOT := docs/images/front.png
SCREENSHOT_WINDOW ?= 1280,1260

screenshot: $(INSTALLED) test-browser  ## docs/images/front.png: the demo's llm-7b-pt-r1 report in headless chromium
	@command -v chromium >/dev/null 2>&1 || { echo "make screenshot needs Debian's chromium (make test-browser installs it as root)"; exit 1; }
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && rm -f $(SCREENSHOT) && mkdir -p $(dir $(SCREENSHOT)) && \
	{ $(BIN)/runledger demo --dir "$$scratch" >"$$scratch/demo.log" 2>&1 || { tail -20 "$$scratch/demo.log"; exit 1; }; } && \
	{ chromium --headless $$([ "$$(id -u)" = 0 ] && echo --no-sandbox) --disable-gpu --hide-scrollbars --no-first-run \
		--disable-background-networking --disable-component-update --user-data-dir="$$scratch/chromium" \
		--window-size=$(SCREENSHOT_WINDOW) --screenshot=$(CURDIR)/$(SCREENSHOT) \
		"file://$$scratch/.runledger/reports/llm-7b-pt-r1/report.html" >"$$scratch/chromium.log" 2>&1 \
		&& test -s $(SCREENSHOT) || { tail -20 "$$scratch/chromium.log"; exit 1; }; } && \
	echo "wrote $(SCREENSHOT)"

# Debian's postgresql: the server the tests of the lake's PostgreSQL catalog start on 127.0.0.1
# (tests/support/postgres.py); installed when missing, which needs root and apt-get.
test-postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends postgresql >/dev/null; \
		else \
			echo "PostgreSQL is missing: install Debian's postgresql package (needs root), then run make test again"; \
			exit 1; \
		fi; }

# Debian's prometheus (promtool comes with it): the server the Kubernetes source's tests start on
# 127.0.0.1 with series they write (tests/support/prometheus.py); installed when missing, which needs
# root and apt-get.
test-prometheus:
	@{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends prometheus >/dev/null; \
		else \
			echo "Prometheus is missing: install Debian's prometheus package (needs root), then run make test again"; \
			exit 1; \
		fi; }

# Debian's Slurm 22.05 and MariaDB: the cluster tests/integration/test_slurm_cluster.py starts on
# 127.0.0.1 (tests/support/slurm.py: MariaDB, slurmdbd, slurmctld, one slurmd; auth/none, no munged
# runs); installed when missing, which needs root and apt-get.
SLURM_PROGRAMS := slurmctld slurmd slurmdbd sacct sacctmgr sbatch mariadbd mariadb-install-db
test-slurm:
	@for program in $(SLURM_PROGRAMS); do command -v $$program >/dev/null 2>&1 || missing=1; done; \
	[ -z "$$missing" ] || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends slurmctld slurmd slurmdbd slurm-client mariadb-server >/dev/null; \
		else \
			echo "Slurm is missing: install Debian's slurmctld slurmd slurmdbd slurm-client mariadb-server (needs root), then run make test again"; \
			exit 1; \
		fi; }

RUNLEDGER_CONFIG ?= $(CURDIR)/runledger.yaml
DAGSTER_PORT ?= 3000

# `dg dev` reads the project from pyproject.toml ([tool.dg]) and starts from the repo root; the
# project has no component YAML to check. VIRTUAL_ENV names the venv it runs in (dg warns otherwise).
# Dagster gives SIGTERM whatever SIGINT does: started in the background (`make dev &`, nohup, a
# supervisor), SIGINT arrives ignored and SIGTERM would be ignored too, so SIGINT is reset first;
# `exec` makes dg make's own child, which make passes a SIGTERM on to.
RESET_SIGINT := import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])
dev: $(INSTALLED) $(DAGSTER_HOME_DIR)/dagster.yaml  ## dg dev on 127.0.0.1:$(DAGSTER_PORT); runs, schedules and dagster.yaml live in .dagster/
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) RUNLEDGER_CONFIG=$(RUNLEDGER_CONFIG) VIRTUAL_ENV=$(CURDIR)/$(VENV) \
		exec $(BIN)/python -c '$(RESET_SIGINT)' $(BIN)/dg dev --no-check-yaml -h 127.0.0.1 -p $(DAGSTER_PORT)

clean:
	rm -rf $(VENV) $(BQEMULATOR_VENV) $(FOCUS_CONVERTER_VENV) $(FOCUS_VALIDATOR_VENV) .runledger .dagster runledger.yaml
