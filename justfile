# aggpay: tasks. `just test` is exactly what CI runs.

set shell := ["bash", "-euo", "pipefail", "-c"]

default:
    @just --list

# The features every build of `just test` uses beside each package's
# defaults: the sync bench's ceilings, so that the bench is linted too.
# One value, so that clippy, the tests, the doctests and the documentation
# share one build of the dependencies.
features := "--features aggpay-sync/ceilings"

# What CI runs, each step a stock command: the format, lints as errors on
# every target, the API documentation with warnings as errors, the tests
# (cargo-nextest, configured in `.config/nextest.toml`), the doctests
# (nextest does not run them), the examples against the mock, and the
# dependencies held to the declared minimum Rust.
test:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets {{features}} --locked -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps {{features}} --locked
    cargo nextest run --workspace {{features}} --locked
    cargo test --doc --workspace {{features}} --locked
    {{just_executable()}} examples
    {{just_executable()}} msrv

# Our own code is held to `rust-version` by clippy's `incompatible_msrv`
# (on in `just test`); this holds the dependencies to it.
msrv:
    python3 .ci/msrv {{features}}

# Lints alone, warnings as errors.
clippy:
    cargo clippy --workspace --all-targets {{features}} --locked -- -D warnings

# Run the client examples against an in-process mock.
examples:
    cargo run --locked -q {{features}} --example payment_charges > /dev/null
    cargo run --locked -q {{features}} --example batches_to_csv > /dev/null
    tmp=$(mktemp -d) && cargo run --locked -q {{features}} --example checkpoint -- "$tmp/state.txt" > /dev/null; rm -rf "$tmp"
    tmp=$(mktemp -d) && cargo run --locked -q {{features}} --example rotate_key -- "$tmp/secret.txt" > /dev/null; rm -rf "$tmp"

# Run the mock server (pass flags after `--`, e.g. `just mock --port 8080 --info-file f.json`).
mock *ARGS:
    cargo run --locked --release -p aggpay-mock -- {{ARGS}}

# Run the conformance harness (`just conformance --mock`, or --base-url …).
conformance *ARGS:
    cargo run --locked --release -p aggpay-conformance -- {{ARGS}}

# Build the API documentation, warnings as errors.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps {{features}} --locked

# `spec/` is the contract the harness quotes and is tested against; after
# the shared specification changes, copy it in and see what moved.
spec-diff SHARED="../shared/spec":
    diff -u {{SHARED}}/API.md spec/API.md
    diff -u {{SHARED}}/WIRE.md spec/WIRE.md

# Benchmarks (release): print a table, write target/bench.json.
# `AGGPAY_BENCH_ROUNDS=15 just bench` takes 15 rounds of the sync's
# 1,000,000-row figures instead of 5 (1 to 50): a steadier median. Then
# the harness against 200 random legal servers, and 200 faults each on a
# random legal server (20 of each in `just test`, always the same: a
# fixed seed). The bench draws a new seed each time; a failure prints it
# (`AGGPAY_LEGAL_SEED=N` draws the same servers again).
bench:
    cargo bench --locked -p aggpay-conformance --bench evidence
    cargo bench --locked -p aggpay-sync --features ceilings --bench sync
    AGGPAY_LEGAL_SEED=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ') AGGPAY_LEGAL_SERVERS=200 cargo nextest run --locked -p aggpay-conformance -E 'test(/random_legal_servers_pass|faults_are_caught_over_random_legal_servers/)'

# Mirror settlements into a SQLite database (e.g. `just sync --db demo.db --mock`).
sync *ARGS:
    cargo run --locked --release -p aggpay-sync -- {{ARGS}}
