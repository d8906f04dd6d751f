//! Open enumerations: the values API.md lists are variants; any other value
//! the server sends is kept as text, never rejected.

/// Declares an open enumeration serialized as its wire string.
macro_rules! open_enum {
    (
        $(#[$doc:meta])*
        $name:ident {
            $( $(#[$vdoc:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vdoc])* $variant, )+
            /// A value this version of the crate does not know, kept as sent.
            Other(String),
        }

        impl $name {
            /// Every value this version of the crate knows.
            pub const KNOWN: &'static [$name] = &[$($name::$variant),+];

            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Other(other) => other,
                }
            }

            /// True when the value is one this version of the crate knows.
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Other(_))
            }
        }

        /// Parses a value this version of the crate knows, exactly as the
        /// wire spells it; an unknown one is an error naming the known
        /// ones (a filter typed wrong must not become a filter that
        /// matches nothing). What a server sends is read leniently
        /// instead ([`From`], and deserializing, keep it as `Other`).
        impl std::str::FromStr for $name {
            type Err = crate::Error;

            fn from_str(value: &str) -> Result<Self, crate::Error> {
                match value {
                    $( $wire => Ok($name::$variant), )+
                    other => Err(crate::Error::invalid_input(
                        stringify!($name),
                        format!(
                            "`{}` is none of the known values {}",
                            crate::id::excerpt(other),
                            [$($wire),+].join(", ")
                        ),
                    )),
                }
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $wire => $name::$variant, )+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $( $wire => $name::$variant, )+
                    _ => $name::Other(value),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::model_util::parsed_str(deserializer, "a string", |value| {
                    Ok::<_, std::convert::Infallible>($name::from(value))
                })
            }
        }
    };
}

pub(crate) use open_enum;

#[cfg(test)]
mod tests {
    use crate::{BatchStatus, RefundStatus};

    #[test]
    fn known_names_parse_unknown_ones_are_refused_naming_the_known() {
        assert_eq!(
            "R_COMPLETED".parse::<RefundStatus>().unwrap(),
            RefundStatus::Completed
        );
        let err = "COMPLETED".parse::<RefundStatus>().unwrap_err().to_string();
        assert!(
            err.starts_with("invalid RefundStatus: `COMPLETED` is none of the known values"),
            "{err}"
        );
        assert!(
            err.contains("R_COMPLETED") && err.contains("R_INITIATED"),
            "{err}"
        );
        assert!("BATCH_DONE".parse::<BatchStatus>().is_err());
        // What a server sends stays lenient.
        let sent: RefundStatus = serde_json::from_str("\"R_REVIEW\"").unwrap();
        assert_eq!(sent, RefundStatus::Other("R_REVIEW".to_owned()));
    }
}
