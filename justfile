# aggpay: tasks. `just test` is exactly what CI runs.

set shell := ["bash", "-euo", "pipefail", "-c"]

default:
    @just --list

# Clippy as the workspace's compiler wrapper (what `cargo clippy` itself
# sets), warnings as errors (its arguments, as `cargo clippy` passes them):
# the build the tests need is linted as it is made, so the dependencies
# are compiled once, not checked for clippy and built again for the tests.
# `.ci/rustc-wrapper` runs clippy-driver, and builds the test and bench
# targets, whose own code runs only as tests, at opt-level 0 (a fifth of
# a fresh build's CPU; the libraries and binaries they test keep level 1).
# `CLIPPY_ARGS` is clippy-driver's private encoding: `lint-works` (the
# first step of `just test`) plants a lint in a scratch crate and fails
# unless the wrapped build refuses it on this toolchain. Should it ever
# stop working, replace `{{lint}}` in `test` by a plain `cargo clippy
# --workspace --all-targets --locked -- -D warnings` step (`just clippy`)
# before the build: the same lints, the dependencies built twice.
# The features the tests are built with, beside each package's defaults:
# the sync bench's ceilings (so that the bench is built and linted). One
# home: `.ci/run-tests` and `.ci/msrv` read it from the environment, so
# that their cargo commands find this build and make no other.
export AGGPAY_BUILD_FEATURES := "aggpay-sync/ceilings"

lint := 'RUSTC_WORKSPACE_WRAPPER="' + justfile_directory() / '.ci/rustc-wrapper' + '" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"'

# Format check, the wrappers proven, the minimum Rust version held,
# lints as errors (every target: libraries, binaries and examples as the
# programs they are, tests, benches; the examples are built by
# `.ci/run-tests`'s `cargo test --no-run`, once: `--all-targets` would
# also build each as a test harness), every test, the API
# documentation (warnings as errors, with the doctests: `.ci/rustdoc`),
# and the examples against the mock. The tests are `cargo test
# --workspace`'s, run by `.ci/run-tests` in two lanes at once (the
# harness's CPU-bound suite beside the rest, which mostly waits): the
# same binaries and doctests, about a minute sooner.
test:
    cargo fmt --all -- --check
    {{just_executable()}} lint-works
    {{just_executable()}} msrv
    {{lint}} cargo test --workspace --lib --tests --benches --features "$AGGPAY_BUILD_FEATURES" --locked --no-run
    {{lint}} python3 .ci/run-tests
    {{just_executable()}} examples

# Proves the wrappers still refuse what they check: a scratch crate with
# a lint (`clone_on_copy`) must fail to build under `{{lint}}`, as a
# library and as its unit tests, and one
# with a standard-library item newer than its `rust-version` too
# (`incompatible_msrv`: what holds our own code to the declared minimum
# Rust, where no older toolchain can be installed; `.ci/msrv` holds the
# dependencies to it); and a broken intra-doc link must fail its
# doctests through `.ci/rustdoc` (the API documentation check of `just
# test`; should it ever stop working, run `just doc` in its place).
lint-works:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    mkdir -p "$dir/src"
    printf '[package]\nname = "planted"\nversion = "0.0.0"\nedition = "2024"\nrust-version = "1.85"\n[workspace]\n' > "$dir/Cargo.toml"
    printf 'pub fn planted(x: u32) -> u32 {\n    x.clone()\n}\n// Stabilised in Rust 1.88.\npub fn newer(x: &[u8]) -> usize {\n    x.as_chunks::<2>().0.len()\n}\n' > "$dir/src/lib.rs"
    if {{lint}} cargo build -q --offline --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target" 2> "$dir/err"; then
        echo "the lint wrapper let a planted lint through: use plain cargo clippy (see the comment on lint)" >&2
        exit 1
    fi
    grep -q clone_on_copy "$dir/err" || { cat "$dir/err" >&2; exit 1; }
    grep -q incompatible_msrv "$dir/err" || { cat "$dir/err" >&2; exit 1; }
    # The test targets take the wrapper's other path (opt-level 0): linted alike.
    if {{lint}} cargo test -q --no-run --lib --offline --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target" 2> "$dir/err"; then
        echo "the lint wrapper let a planted lint through in a test build: see the comment on lint" >&2
        exit 1
    fi
    grep -q clone_on_copy "$dir/err" || { cat "$dir/err" >&2; exit 1; }
    printf '/// Not [`Nowhere`].\n///\n/// ```\n/// assert_eq!(planted::linked(), 1);\n/// ```\npub fn linked() -> u32 {\n    1\n}\n' >> "$dir/src/lib.rs"
    if RUSTDOC="$PWD/.ci/rustdoc" cargo test -q --doc --offline --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target" 2> "$dir/err" > /dev/null; then
        echo ".ci/rustdoc let a broken intra-doc link through: run just doc instead (see lint-works)" >&2
        exit 1
    fi
    grep -q 'unresolved link to `Nowhere`' "$dir/err" || { cat "$dir/err" >&2; exit 1; }

# Every dependency builds with the declared minimum Rust (`rust-version`).
msrv:
    python3 .ci/msrv

# Lints alone, as `cargo clippy` runs them (no build).
clippy:
    cargo clippy --workspace --all-targets --locked -- -D warnings

# Run the client examples against an in-process mock. Without `-p`, the
# workspace's features, and linted as `just test` builds: the build it
# made is reused.
examples:
    {{lint}} cargo run --locked -q --example payment_charges > /dev/null
    {{lint}} cargo run --locked -q --example batches_to_csv > /dev/null
    tmp=$(mktemp -d) && {{lint}} cargo run --locked -q --example checkpoint -- "$tmp/state.txt" > /dev/null; rm -rf "$tmp"
    tmp=$(mktemp -d) && {{lint}} cargo run --locked -q --example rotate_key -- "$tmp/secret.txt" > /dev/null; rm -rf "$tmp"

# Run the mock server (pass flags after `--`, e.g. `just mock --port 8080 --info-file f.json`).
mock *ARGS:
    cargo run --locked --release -p aggpay-mock -- {{ARGS}}

# Run the conformance harness (`just conformance --mock`, or --base-url …).
conformance *ARGS:
    cargo run --locked --release -p aggpay-conformance -- {{ARGS}}

# Build the API documentation, warnings as errors. `just test` checks the
# same with the test build's libraries (`.ci/rustdoc`, beside the
# doctests): `cargo doc` would check every dependency again.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# `spec/` is the contract the harness quotes and is tested against; after
# the shared specification changes, copy it in and see what moved.
spec-diff SHARED="../shared/spec":
    diff -u {{SHARED}}/API.md spec/API.md
    diff -u {{SHARED}}/WIRE.md spec/WIRE.md

# Benchmarks (release): print a table, write target/bench.json.
# `AGGPAY_BENCH_ROUNDS=15 just bench` takes 15 rounds of the sync's
# 1,000,000-row figures instead of 5 (1 to 50): a steadier median.
bench:
    cargo bench --locked -p aggpay-conformance --bench evidence
    cargo bench --locked -p aggpay-sync --features ceilings --bench sync

# Mirror settlements into a SQLite database (e.g. `just sync --db demo.db --mock`).
sync *ARGS:
    cargo run --locked --release -p aggpay-sync -- {{ARGS}}
