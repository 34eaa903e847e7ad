#!/usr/bin/env bash
# Build the npm packages and the PyPI wheel from this checkout into target/packages, for this
# machine's platform (x86_64-unknown-linux-gnu): the wheel with maturin (`bin` bindings, the
# cargo profile given: dev in CI, where the test build is already there, dist for what a release
# ships), the npm packages from the binary of that profile (stripped) with packaging/npm/build.py.
# The release workflow (.github/workflows/release.yml) does the same per target.
#
#   scripts/build-packages.sh [dev|release|dist]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-dev}
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
out=target/packages
maturin=${MATURIN:-target/test-venv/bin/maturin}
rm -rf "$out" && mkdir -p "$out/npm" "$out/pypi" "$out/bin"
"$maturin" build --quiet --profile "$profile" --compatibility linux --out "$out/pypi" 2>&1 \
  | grep -v '^\(🔗\|📡\|📦\)' || true
ls "$out"/pypi/*.whl > /dev/null
cp "target/$dir/mcp-budget" "$out/bin/mcp-budget"
strip "$out/bin/mcp-budget"
python3 packaging/npm/build.py --out "$out/npm" \
  --binary "x86_64-unknown-linux-gnu=$out/bin/mcp-budget" > /dev/null
ls -l "$out"/pypi/*.whl "$out"/npm/*.tgz
