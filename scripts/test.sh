#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run, in order:
# pytest (tests/), the TypeScript unit tests (jest) and lint (eslint, prettier), and the
# Galata UI tests (ui-tests/).
# Stops at the first failing stage. The last line is "N passed, N failed" over all three
# runners; a set-up stage that fails counts as one failure. Exit status is non-zero on failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
VENV=$ROOT/.venv
export PIP_DISABLE_PIP_VERSION_CHECK=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export DEBIAN_FRONTEND=noninteractive
REPORTS=$(mktemp -d)
PASSED=0
FAILED=0
STAGE=setup
T0=$SECONDS

finish() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "$STAGE" != done ]; then
    echo "!! stage '$STAGE' failed (exit $rc)" >&2
    # Set-up failures have no test counts of their own; count the stage once.
    case $STAGE in pytest | jest | galata) ;; *) FAILED=$((FAILED + 1)) ;; esac
  fi
  echo "== total $((SECONDS - T0))s"
  echo "$PASSED passed, $FAILED failed"
  rm -rf "$REPORTS"
  [ "$FAILED" -eq 0 ] && [ "$rc" -eq 0 ] || exit "$((rc == 0 ? 1 : rc))"
}
trap finish EXIT

stage() {
  STAGE=$1
  STAGE_T0=$SECONDS
  echo
  echo "== $1"
}
stage_done() { echo "== $STAGE: $((SECONDS - STAGE_T0))s"; }

# Adds the counts of one runner's report (format: junit | jest | playwright) to the totals.
count() {
  local counts
  counts=$("$VENV/bin/python" "$ROOT/scripts/count_tests.py" "$1" "$2")
  PASSED=$((PASSED + ${counts% *}))
  FAILED=$((FAILED + ${counts#* }))
}

stage apt
# Debian's Chromium for the UI tests; a C++ compiler for Inductor, which `run --try compile`
# uses on the CPU test scripts
missing=""
[ -x /usr/bin/chromium ] || missing="chromium chromium-driver"
command -v g++ >/dev/null || missing="$missing g++"
if [ -n "$missing" ]; then
  apt-get update
  apt-get install -y $missing
fi
stage_done

stage python-env
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
export PATH=$VENV/bin:$PATH
# The CPU build first: the package's own range (torch>=2.1) would otherwise pull CUDA wheels.
pip install torch==2.13.0
# An earlier run's `jupyter-builder develop` links the venv's labextension folder to the build
# folder, so pip's editable install wrote install.json through that link into the build;
# left there, this install would add it to the wheel twice and fail.
rm -f jupyter_gpuprof/labextension/install.json
# The frameworks extra (transformers, lightning, accelerate) must not pull another torch.
pip install -e ".[test,frameworks]" -c <(echo torch==2.13.0)
stage_done

stage extension-build
jlpm install
jlpm build
jupyter-builder develop --overwrite .
jupyter labextension list 2>&1 | grep -iE "jupyter-gpuprof.*OK"
stage_done

stage pytest
set +e
python -m pytest -ra --junitxml="$REPORTS/pytest.xml"
rc=$?
set -e
[ -f "$REPORTS/pytest.xml" ] && count junit "$REPORTS/pytest.xml"
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  FAILED=$((FAILED + 1))
fi
[ "$rc" -eq 0 ] || exit "$rc"
stage_done

stage jest
set +e
jlpm test --ci --json --outputFile="$REPORTS/jest.json"
rc=$?
set -e
[ -f "$REPORTS/jest.json" ] && count jest "$REPORTS/jest.json"
[ "$rc" -eq 0 ] || exit "$rc"
# eslint + prettier over src/ and style/: a lint failure counts as one failed test
if ! jlpm lint:check; then
  echo "jlpm lint:check failed: run 'jlpm lint' to fix formatting, then the eslint findings" >&2
  FAILED=$((FAILED + 1))
  exit 1
fi
stage_done

stage galata-install
(cd ui-tests && jlpm install)
stage_done

stage galata
set +e
(cd ui-tests && GPUPROF_PW_JSON="$REPORTS/galata.json" jlpm playwright test)
rc=$?
set -e
[ -f "$REPORTS/galata.json" ] && count playwright "$REPORTS/galata.json"
[ "$rc" -eq 0 ] || exit "$rc"
stage_done

STAGE=done
