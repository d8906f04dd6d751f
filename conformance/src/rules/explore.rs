//! explore.*: random sequences of every operation against the model
//! (`crate::explore`): what a write does to the records it was not aimed
//! at, what one operation does after another changed the state.

use aggpay_mock::Fault;

use super::{Kind, Level, Rule, Run, claims};
use crate::contract::subject::{Said, Subject};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "explore.sequences",
        level: Level::Required,
        kind: Kind::Sequences,
        source: "API.md Authentication 1-3; Access keys (rotate); Settlements (report export); Endpoints (every read); the state-bound statements of the field tables",
        claims: &[
            crate::explore::SECRET_KEEPS_ITS_REACH,
            crate::explore::KEYS_AS_WRITTEN,
            claims::UNAUTHORIZED,
            claims::NO_SERVER_ERROR,
            claims::VALID_REQUEST_SUCCEEDS,
            claims::UNKNOWN_ID_IS_404,
            claims::ANSWERS_FOR_ID,
            claims::ANSWERS_FOR_IBAN,
            claims::ROTATES_THE_KEY_ASKED,
            claims::FAILED_ROTATION_UNDONE,
            claims::EXPORT_IS_ASKED,
            claims::STATE_BOUND,
        ],
        summary: "random sequences of every operation (reads, lookups, rotations, exports), each with known, unknown and other kinds' ids and with every secret the model knows, judged against the model step by step; after every write the keys are read back (only the write's effect may change), after every credential change every operation is tried with every secret (a rotated key opens what it opened, an old secret opens what its key did or nothing); a failure shrinks to a replayable script",
        // The faults it catches whatever the seed (nine seeds tried at
        // the default size, each caught by all): the two made for it, and
        // those every draw meets. Others it finds by chance, depending on
        // the draw (the mutation test lets an exploring rule catch more
        // than it names, never less).
        faults: &[
            Fault::RotateUnknownActs,
            Fault::WebhooksStaleSecrets,
            Fault::NoAuth,
            Fault::AcceptAnyKey,
            Fault::AcceptEmptyKey,
            Fault::AggregatorKeysMasked,
            Fault::AggregatorKeysStale,
        ],
        judges: &[
            Subject::Said(Said::KeysHeld),
            Subject::Said(Said::Rotation),
            Subject::Said(Said::ExportStatus),
        ],
        run: Run::Check(crate::explore::sequences),
    }]
}
