#!/usr/bin/env bash
# Create .venv (when missing) and install requirements.lock into it, then ptbank itself.
#
# uv installs the lock: it keeps every package unpacked in its cache and links it into the
# environment, where pip unpacks each wheel again (torch's CUDA build is 5.4 GB installed).
# Measured with bench/setup.py. uv reads no pip.conf: where only pip reaches your package
# index (a mirror, a proxy), uv fails and pip installs the same lock instead.
set -euo pipefail
venv=${1:-.venv}
python="$venv/bin/python"
pip=("$python" -m pip install -q --disable-pip-version-check)
[[ -x "$python" ]] || python3 -m venv "$venv"
uv_pin=$(grep -E '^uv==' requirements.lock || true)
if [[ -n "$uv_pin" ]] && "${pip[@]}" "$uv_pin" \
    && "$python" -m uv pip install -q --python "$python" -r requirements.lock; then
  :
else
  echo "ptbank: uv could not install requirements.lock; installing it with pip" >&2
  "${pip[@]}" -r requirements.lock
fi
"${pip[@]}" --no-deps --no-build-isolation -e .
