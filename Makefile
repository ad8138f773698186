# ptbank — every target is a thin call of the `ptbank` CLI; `make help` lists them.
# Set-up is automatic: each target depends on a pinned .venv and the system packages it needs.

LEVEL     ?= all
# Languages of the bank: zh, en, bi, or a comma list. Not LANG: the shell's locale owns that.
BANK_LANG ?= zh,en
MINUTES   ?= 45
SEED      ?= 1
SHEET_LANG ?= zh
# An interview sheet for a role profile of content/profiles.yaml instead of one LEVEL, and for
# whom (the ledger keeps a candidate from seeing a question twice)
PROFILE   ?=
CANDIDATE ?=
JOBS      ?=
# Another torch version to verify under or compare with (make verify TORCH=2.13.0, make drift)
TORCH     ?=

PYTHON  := .venv/bin/python
PTBANK  := $(PYTHON) -m ptbank
STAMP   := .venv/.ptbank-installed
JOBS_ARG := $(if $(JOBS),--jobs $(JOBS),)
TORCH_ARG := $(if $(TORCH),--torch $(TORCH),)
SHEET_ARGS := $(if $(PROFILE),--profile $(PROFILE),--level $(LEVEL)) $(if $(CANDIDATE),--candidate "$(CANDIDATE)",)

# printing verifies first: snippets run in a bubblewrap sandbox, and torch.compile ones need g++
PRINT_PACKAGES := fonts-noto-cjk libharfbuzz-subset0 fontconfig g++ bubblewrap
TEST_PACKAGES  := $(PRINT_PACKAGES) poppler-utils libreoffice-writer-nogui chromium

.DEFAULT_GOAL := help
.PHONY: help setup system-print system-test lint stats verify record drift pdf docx md site anki all sheet test bench schema lock clean doctor

help: ## show this help
	@echo "usage: make TARGET [LEVEL=beginner|intermediate|advanced|all] [BANK_LANG=zh,en|bi]"
	@echo
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml
	tools/install-venv.sh .venv
	@touch $@

setup: $(STAMP) system-print ## create .venv from requirements.lock and install fonts (idempotent)

system-print:
	@tools/ensure-system-packages.sh $(PRINT_PACKAGES)

system-test:
	@tools/ensure-system-packages.sh $(TEST_PACKAGES)

lint: $(STAMP) ## check every question file (schema, parity, printable code)
	$(PTBANK) lint

stats: $(STAMP) ## questions by level × topic × kind, seed coverage
	$(PTBANK) stats

doctor: $(STAMP) ## check torch, fonts and tools, with the command that fixes each
	$(PTBANK) doctor

verify: $(STAMP) system-print ## run every snippet under each torch build of the bank (cached); TORCH=V for one
	$(PTBANK) verify $(JOBS_ARG) $(TORCH_ARG)

record: $(STAMP) system-print ## verify under every build, then write content/verification-record.jsonl (commit it)
	$(PTBANK) verify --record $(JOBS_ARG)

drift: $(STAMP) system-print ## snippets whose verdict or warnings differ between the pinned torch and TORCH
	$(PTBANK) drift $(JOBS_ARG) $(TORCH_ARG)

pdf: setup ## PDFs for LEVEL, zh and en, with and without answers
	$(PTBANK) build --format pdf --level $(LEVEL) --lang $(BANK_LANG) $(JOBS_ARG)

docx: setup ## DOCX for LEVEL, same editions
	$(PTBANK) build --format docx --level $(LEVEL) --lang $(BANK_LANG) $(JOBS_ARG)

md: setup ## Markdown for LEVEL, same editions
	$(PTBANK) build --format md --level $(LEVEL) --lang $(BANK_LANG) $(JOBS_ARG)

site: setup ## the offline study site of the whole bank: build/site/{zh,en,bi}/index.html
	$(PTBANK) build --format html --lang zh,en,bi $(JOBS_ARG)

anki: setup ## flashcard decks: build/anki/ptbank-LEVEL-LANG.apkg, 4 levels x zh, en, bi
	$(PTBANK) build --format anki --level beginner,intermediate,advanced,all --lang zh,en,bi $(JOBS_ARG)

all: setup ## every printed format (md, docx, pdf), every level, zh, en and bi; `make site anki` for the study formats
	$(PTBANK) build --format all --level beginner,intermediate,advanced,all --lang zh,en,bi $(JOBS_ARG)

sheet: setup ## an interview sheet: make sheet LEVEL=intermediate MINUTES=45 SEED=7, or PROFILE=training-infra MINUTES=60 SEED=7 CANDIDATE=A12
	$(PTBANK) sheet $(SHEET_ARGS) --minutes $(MINUTES) --seed $(SEED) --lang $(SHEET_LANG) --format all

test: $(STAMP) system-test ## the full test suite (what CI runs)
	$(PYTHON) -m pytest -q

bench: $(STAMP) system-test ## benchmarks: verification, rendering and memory per torch build, side by side
	$(PYTHON) bench/verify.py
	$(PYTHON) bench/render.py
	$(PYTHON) bench/memory.py --only torch-compile-basics torch-export-control-flow

schema: $(STAMP) ## regenerate content/question.schema.json from the models
	$(PTBANK) schema --out content/question.schema.json

lock: ## re-pin requirements.lock from the current .venv
	{ sed -n '/^#/p' requirements.lock; $(PYTHON) -m pip freeze --exclude-editable | sed 's/^torch==\([^+]*\)+.*/torch==\1/'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock

clean: ## remove build/ (artifacts and caches); keeps .venv
	rm -rf build
