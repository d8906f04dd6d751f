//! The command line: values out of range exit 2, the fault list tells
//! each fault's layer, the info file names the samples.

use std::process::Command;

fn mock(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aggpay-mock"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn values_out_of_range_exit_2() {
    for args in [
        &["--batches", "0"][..],
        &["--merchants", "1000000"],
        &["--chaos", "503=2"],
        &["--chaos", "teapot=0.1"],
        &["--latency", "80..20"],
        &["--header-timeout", "0"],
        &["--idle-timeout", "1e20"],
        &["--max-connections", "0"],
        &["--tls-cert", "/nonexistent.pem"],
        &["--fault", "no-such-fault"],
        &["--port", "70000"],
    ] {
        let out = mock(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A start that fails (a TLS file that does not exist) exits 2 too.
    let out = mock(&[
        "--tls-cert",
        "/nonexistent.pem",
        "--tls-key",
        "/nonexistent.pem",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.pem"));
}

#[test]
fn the_fault_list_names_each_layer() {
    let out = mock(&["--fault", "list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for fault in aggpay_mock::Fault::ALL {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(fault.name()))
            .unwrap_or_else(|| panic!("{} is not listed", fault.name()));
        assert!(line.contains(fault.layer().as_str()), "{line}");
    }
}

#[test]
fn the_info_file_names_two_keys_to_rotate() {
    let mock = crate::support::Process::start(&[], None);
    let first = mock.info["access_key_id"].as_str().unwrap();
    let second = mock.info["second_access_key_id"].as_str().unwrap();
    assert!(first.starts_with("ak_") && second.starts_with("ak_"));
    assert_ne!(first, second);
}
