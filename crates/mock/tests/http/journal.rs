//! The journal keeps the last answers, up to its capacity, and never
//! shows a body (which holds secrets in clear) in `Debug`.

use aggpay_mock::MockConfig;

use crate::support::Api;

#[test]
fn the_journal_keeps_the_last_answers_up_to_its_capacity() {
    let api = Api::start(MockConfig::new().journal(2));
    assert_eq!(api.get("/keys", &[]).status, 200);
    assert_eq!(
        api.get_with("/ledger/accounts", &[], Some("wrong")).status,
        401
    );
    assert_eq!(api.get("/webhooks", &[("limit", "-1")]).status, 400);
    let kept = api.server.journal();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[0].method, "GET");
    assert!(
        kept[0].target.ends_with("/ledger/accounts"),
        "{}",
        kept[0].target
    );
    assert_eq!(kept[0].status, 401);
    assert!(
        kept[1].target.ends_with("/webhooks?limit=-1"),
        "{}",
        kept[1].target
    );
    assert_eq!(kept[1].status, 400);
    assert!(kept[1].content_type.starts_with("application/json"));
    assert!(String::from_utf8_lossy(&kept[1].body).contains("error.bad_request"));

    // Off by default; a body is never shown by Debug.
    let api = Api::new();
    api.get("/keys", &[]);
    assert!(api.server.journal().is_empty());
    let api = Api::start(MockConfig::new().journal(10));
    api.get("/keys", &[]);
    let shown = format!("{:?}", api.server.journal());
    assert!(!shown.contains("aggsk_"), "{shown}");
    assert!(shown.contains("bytes>"), "{shown}");
}
