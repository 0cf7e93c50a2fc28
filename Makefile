# RunLedger. `make run` and `make test` work on a fresh clone: both create .venv when needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DAGSTER_HOME_DIR := $(CURDIR)/.dagster

.PHONY: run test dev bench clean

$(INSTALLED): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(INSTALLED)

run: $(INSTALLED)  ## the nightly job on the embedded demo data set
	$(BIN)/runledger demo --dir .

test: $(INSTALLED)  ## the whole pytest suite
	$(BIN)/python -m pytest

dev: $(INSTALLED)  ## dagster dev on 127.0.0.1, state kept in .dagster/
	mkdir -p $(DAGSTER_HOME_DIR)
	cp dagster.yaml $(DAGSTER_HOME_DIR)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) $(BIN)/dagster dev -h 127.0.0.1 -p 3000

clean:
	rm -rf $(VENV) .runledger .dagster runledger.yaml
