#!/usr/bin/env bash
# pip_install_test.sh SOURCE VENV - `pip install SOURCE` into a fresh venv VENV, then the Python
# tests against the installed package (not the build tree). Needs python3-venv and PyPI
# (scikit-build-core, NumPy, pytest); exits 77 (skipped) when the venv cannot be made.
set -euo pipefail
src=$1
venv=$2
py=${GPUHIST_PIP_PYTHON:-python3}
rm -rf "$venv"
if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
    echo "skipped: $py -m venv failed (install python3-venv)"
    exit 77
fi
# A copy of the tracked and untracked-but-not-ignored files: the build sees no build trees.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work")
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "$work" pytest
cd "$work/tests/python"
"$venv/bin/python" -c 'import gpuhist, numpy; print("installed gpuhist", gpuhist.__version__,
"with NumPy", numpy.__version__, "backends", gpuhist.backends())'
exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider .
