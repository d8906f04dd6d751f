//! `Client::check` tells which part of a setup is wrong, and a 404 says
//! what it was about.

use std::time::Duration;

use aggpay::*;
use aggpay_mock::{Legal, MockConfig, MockServer};

use crate::support::{Scripted, ScriptedClient, json, mock};

fn with(base: &str, aggregator: &str, key: &str) -> Client {
    Client::builder(base, aggregator.parse().unwrap(), key)
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

#[test]
fn check_says_which_part_of_the_setup_is_wrong() {
    let (server, client) = mock();
    client.check().unwrap();

    let agg = server.aggregator_id().as_str();
    let wrong_key = with(server.url(), agg, "not-the-key").check().unwrap_err();
    assert!(
        matches!(wrong_key.kind(), ErrorKind::Config(_)),
        "{wrong_key:?}"
    );
    assert!(
        wrong_key.to_string().contains("the key was refused"),
        "{wrong_key}"
    );
    assert!(
        !wrong_key.to_string().contains("not-the-key"),
        "{wrong_key}"
    );

    // A server answering 404 for an aggregator that is not the key's (a
    // legal choice), and a base URL with a path prefix too many.
    let strict = MockServer::start(MockConfig::new().legal(Legal::UnknownAggregator404)).unwrap();
    let key = strict.secret_key();
    let unknown = with(strict.url(), "agg_nobody", key.expose())
        .check()
        .unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("aggregator agg_nobody was not found"),
        "{unknown}"
    );
    let prefixed = format!("{}/api", server.url());
    let wrong_base = with(&prefixed, agg, server.secret_key().expose())
        .check()
        .unwrap_err();
    assert!(wrong_base.to_string().contains("base URL"), "{wrong_base}");

    // Nothing listening: the network error itself, after one attempt.
    let nowhere = with("http://127.0.0.1:9", agg, "k").check().unwrap_err();
    assert!(nowhere.is_network(), "{nowhere}");
    assert_eq!(nowhere.attempts(), 1);

    // An address that is not the API.
    let html = Scripted::start(vec![aggpay_testkit::Act::Reply(
        404,
        vec![("Content-Type", "text/html".into())],
        b"<html>nothing here</html>".to_vec(),
    )]);
    let e = html.client(|b| b).check().unwrap_err();
    assert!(
        e.to_string().contains("does not answer as the API does"),
        "{e}"
    );
}

#[test]
fn a_not_found_says_what_it_was_about() {
    let (server, client) = mock();
    let e = client
        .get_payment_charges(&PaymentId::parse("pm_nothing").unwrap())
        .unwrap_err();
    assert!(e.is_not_found());
    let shown = e.to_string();
    assert!(shown.contains("no payment pm_nothing"), "{shown}");
    assert!(shown.contains(server.aggregator_id().as_str()), "{shown}");

    // A list whose 404 can only be about the aggregator.
    let scripted = Scripted::start(vec![json(
        404,
        r#"{"code":"error.not_found","message":"requested resource not found"}"#,
    )]);
    let e = scripted
        .client(|b| b)
        .list_webhooks(&WebhookQuery::new())
        .unwrap_err();
    assert!(
        e.to_string().contains("aggregator agg_test not found"),
        "{e}"
    );
}
