# RunLedger. `make run` and `make test` work on a fresh clone: both create .venv when needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
BQEMULATOR_VENV := .venv-bqemulator
BQEMULATOR_INSTALLED := $(BQEMULATOR_VENV)/.installed
DAGSTER_HOME_DIR := $(CURDIR)/.dagster

.PHONY: run test dev clean

$(INSTALLED): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(INSTALLED)

# The BigQuery emulator the integration tests start: its own venv (it pins another duckdb).
$(BQEMULATOR_INSTALLED): constraints-bqemulator.txt
	test -x $(BQEMULATOR_VENV)/bin/python || $(PYTHON) -m venv $(BQEMULATOR_VENV)
	$(BQEMULATOR_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-bqemulator.txt \
		bqemulator duckdb duckdb-extension-spatial numpy
	touch $(BQEMULATOR_INSTALLED)

run: $(INSTALLED)  ## the nightly job on the embedded demo data set
	$(BIN)/runledger demo --dir .

test: $(INSTALLED) $(BQEMULATOR_INSTALLED)  ## the whole pytest suite
	$(BIN)/python -m pytest

RUNLEDGER_CONFIG ?= $(CURDIR)/runledger.yaml

dev: $(INSTALLED)  ## dagster dev on 127.0.0.1:3000; runs, schedules and dagster.yaml live in .dagster/
	mkdir -p $(DAGSTER_HOME_DIR)
	cp dagster.yaml $(DAGSTER_HOME_DIR)/dagster.yaml
	cd $(DAGSTER_HOME_DIR) && DAGSTER_HOME=$(DAGSTER_HOME_DIR) RUNLEDGER_CONFIG=$(RUNLEDGER_CONFIG) \
		$(CURDIR)/$(BIN)/dagster dev -m pipelines.definitions -h 127.0.0.1 -p 3000

clean:
	rm -rf $(VENV) $(BQEMULATOR_VENV) .runledger .dagster runledger.yaml
