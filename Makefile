# Two commands do all the set-up on a fresh machine: `make serve` and `make test`.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
NODE_OK := node_modules/.installed

.PHONY: serve test check lint bench build chromium realsys clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0   # the CPU build on this disk; the gpu extra accepts it
	$(PY) -m pip install -q -e '.[site,serve,gpu,notebook,dev,ray,parquet]'
	touch $(STAMP)

$(NODE_OK): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_OK)

chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# redis-server and nginx for `contention replay` and its tests (Debian packages; nothing is started here)
realsys:
	@{ command -v redis-server && { command -v nginx || test -x /usr/sbin/nginx; }; } >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server nginx >/dev/null; }
	@systemctl disable --now redis-server nginx >/dev/null 2>&1 || true

## serve: build the site and serve it with the JSON API on http://127.0.0.1:8000
serve: $(STAMP) $(NODE_OK)
	$(VENV)/bin/contention serve --host 127.0.0.1 --port $${PORT:-8000}

## test: every test (unit, property, Pyodide-under-Node, Chromium, Triton interpreter), over the
## cores (pytest-xdist; worksteal keeps both busy to the end; the workers share one site build)
test: $(STAMP) $(NODE_OK) chromium realsys
	$(PY) -m pytest -n auto --dist worksteal

## check: the fast loop (under 2 minutes on 2 cores): unit, property and CPython tests, sampled
## (docs/architecture.md, "Two speeds of testing"); no npm, no browser
CHECK_MARKS := not browser and not pyodide and not triton and not slow
check: $(STAMP)
	CONTENTION_CHECK=1 $(PY) -m pytest -q -n auto -m "$(CHECK_MARKS)"

## lint: ruff for Python; ESLint and Prettier (pinned in package.json) for the front end's JavaScript
lint: $(STAMP) $(NODE_OK)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	npx --no-install eslint web/static web/notebook tests/browser/js eslint.config.mjs
	npx --no-install prettier --check "web/static/**/*.js" "web/notebook/*.js" "tests/browser/js/*.mjs"

build: $(STAMP) $(NODE_OK)
	$(VENV)/bin/contention build --out dist

bench: $(STAMP)
	$(VENV)/bin/contention bench

clean:
	rm -rf $(VENV) node_modules dist
