#!/usr/bin/env bash
# The Debian package: the binary built with every library mechanism, a manual
# page per subcommand and completions for bash, zsh and fish, made by cargo-deb.
#
#   packaging/deb.sh                         # release build: target/debian/ipcperf_<v>_<arch>.deb
#   packaging/deb.sh --binary PATH OUT_DIR   # package a binary already built (the tests do)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-deb >/dev/null || cargo install cargo-deb --locked --version 3.8.0
args=()
if [ "${1:-}" = --binary ]; then
    # cargo-deb takes the binary from <target dir>/release: a scratch one here.
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    mkdir -p "$scratch/release"
    cp "${2:?--binary PATH OUT_DIR}" "$scratch/release/ipcperf"
    export CARGO_TARGET_DIR=$scratch
    args=(--output "${3:?--binary PATH OUT_DIR}")
    rel=$scratch/release
else
    cargo build --release -p ipcperf --all-features
    rel=${CARGO_TARGET_DIR:-target}/release
fi
out=$rel/assets
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
"$rel/ipcperf" man --dir "$out/man"
gzip -9nf "$out"/man/*.1
"$rel/ipcperf" completions bash >"$out/completions/ipcperf"
"$rel/ipcperf" completions zsh >"$out/completions/_ipcperf"
"$rel/ipcperf" completions fish >"$out/completions/ipcperf.fish"
cargo deb -p ipcperf --no-build "${args[@]}"
