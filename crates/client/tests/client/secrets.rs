//! No secret in anything the client prints or keeps, and no secret lost.

use aggpay::*;

use crate::support::{Act, KEY, Scripted, ScriptedClient, json, mock};

#[test]
fn no_secret_in_debug_or_errors() {
    let echo = json(
        401,
        &format!(
            r#"{{"api_version":"v1","error":{{"code":"error.unauthorized_access","message":"key {KEY} rejected"}}}}"#
        ),
    );
    let html = Act::Reply(502, vec![], format!("<p>{KEY}</p>").into_bytes());
    let server = Scripted::start(vec![echo, html, json(200, &format!("not json {KEY}"))]);
    let client = server.client(|b| b.retry(RetryPolicy::builder().max_attempts(1).build()));
    let mut texts = vec![
        format!("{client:?}"),
        format!(
            "{:?}",
            Client::builder("http://x", "agg_1".parse().unwrap(), KEY)
        ),
    ];
    for _ in 0..3 {
        let err = client.get_ledger_account().unwrap_err();
        texts.push(format!("{err} {err:?}"));
    }
    for text in &texts {
        assert!(!text.contains(KEY), "{text}");
    }
    assert!(texts[2].contains("<redacted>"), "{}", texts[2]);
    let (_mock, mock_client) = mock();
    let keys = mock_client.list_access_keys(&KeyQuery::new()).unwrap();
    let key_text = format!("{keys:?} {:?}", mock_client.get_aggregator().unwrap());
    for key in &keys.items {
        assert!(!key_text.contains(key.secret.expose()));
    }
}

/// Bodies that carry other keys' secrets (a key list, an aggregator
/// record, a rotation answer), and the key itself in escaped forms: none
/// of it reaches an error.
#[test]
fn every_secret_in_a_body_is_redacted_from_errors() {
    let tricky = r#"k3y/with"quote"#;
    let list = r#"{"api_version":"v1","data":{"count":"oops","keys":[{"id":"1","secret":"aggsk_other_one"},{"secret":"aggsk_\"escaped"}]}}"#;
    let escaped_echo = r#"{"code":"error.bad_request","message":"bad key k3y\/with\"quote"}"#;
    let encoded_echo = "<p>you sent k3y%2Fwith%22quote</p>";
    let failing_500 = r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"dump: {\"secret\":\"aggsk_in_message\"}"}}"#;
    let server = Scripted::start(vec![
        json(200, list),
        json(400, escaped_echo),
        Act::Reply(502, vec![], encoded_echo.as_bytes().to_vec()),
        json(500, failing_500),
    ]);
    let client = Client::builder(server.url(), "agg_test".parse().unwrap(), tricky)
        .retry(RetryPolicy::builder().max_attempts(1).build())
        .build()
        .unwrap();
    let errors = [
        client.list_access_keys(&KeyQuery::new()).unwrap_err(),
        client.get_ledger_account().unwrap_err(),
        client.get_ledger_account().unwrap_err(),
        client.get_ledger_account().unwrap_err(),
    ];
    for err in &errors {
        let text = format!("{err} {err:?}");
        for secret in ["aggsk_", "k3y"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert!(text.contains("<redacted>"), "{text}");
    }
}

/// The rotation happened and its answer holds the new secret, but another
/// field is broken: the secret is kept in the error, never printed.
#[test]
fn a_rotation_answer_that_does_not_decode_keeps_its_secret() {
    let broken = r#"{"api_version":"v1","data":{"id":"not-an-id","token":"?","secret":"aggsk_the_new_one","is_active":"yes"}}"#;
    let server = Scripted::start(vec![json(200, broken)]);
    let id = AccessKeyId::parse("ak_1").unwrap();
    let err = server.client(|b| b).rotate_access_key(&id).unwrap_err();
    assert_eq!(
        err.rotated_secret().map(Secret::expose),
        Some("aggsk_the_new_one")
    );
    let text = format!("{err} {err:?}");
    assert!(!text.contains("aggsk_the_new_one"), "{text}");
    assert!(text.contains("the key was rotated"), "{text}");
    // Other operations never carry one.
    let server = Scripted::start(vec![json(200, broken)]);
    let err = server.client(|b| b).get_ledger_account().unwrap_err();
    assert!(err.rotated_secret().is_none());
}

/// A server's bytes never reach a terminal raw through an error.
#[test]
fn control_characters_from_the_server_are_escaped() {
    let nasty = json(
        400,
        r#"{"code":"error.bad_request","message":"\u001b[2J\u001b]0;owned\u0007\r\nPASS everything"}"#,
    );
    let html = Act::Reply(502, vec![], b"\x1b[31mred\x07\r\nfake line\0".to_vec());
    let server = Scripted::start(vec![nasty, html]);
    let client = server.client(|b| b.retry(RetryPolicy::builder().max_attempts(1).build()));
    for _ in 0..2 {
        let err = client.get_ledger_account().unwrap_err();
        let text = err.to_string();
        assert!(
            !text.chars().any(|c| c.is_control()),
            "raw control character in {text:?}"
        );
        assert!(text.contains("\\u{1b}"), "{text}");
    }
}
