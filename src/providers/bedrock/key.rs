//! A Bedrock provider key as stored: a Bedrock API key (sent as a bearer token), or IAM
//! credentials that sign each request with SigV4 (split by `config::cloud_key`, which checks
//! the key when it is written).

use crate::config::cloud_key::access_key_pair;

/// One stored secret, read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BedrockKey<'a> {
    Sigv4 {
        access_key_id: &'a str,
        secret_access_key: &'a str,
        session_token: Option<&'a str>,
    },
    /// A Bedrock API key: `Authorization: Bearer <key>`.
    ApiKey(&'a str),
}

/// Never prints a secret: only the kind and the access key id.
impl std::fmt::Debug for BedrockKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sigv4 { access_key_id, .. } => write!(f, "Sigv4({access_key_id})"),
            Self::ApiKey(_) => f.write_str("ApiKey"),
        }
    }
}

impl<'a> BedrockKey<'a> {
    /// A secret with no `:` is a Bedrock API key; otherwise it is
    /// `<access_key_id>:<secret_access_key>[:<session_token>]`. Split into at most three parts
    /// (a session token is base64, so it has no `:`, but nothing is lost if one did); an empty
    /// part is refused, as is an empty secret.
    pub fn parse(secret: &'a str) -> Result<Self, &'static str> {
        if secret.is_empty() {
            return Err("the Bedrock key is empty");
        }
        match access_key_pair(secret) {
            None => Ok(Self::ApiKey(secret)),
            Some(Err(why)) => Err(why),
            Some(Ok((access_key_id, secret_access_key, session_token))) => Ok(Self::Sigv4 {
                access_key_id,
                secret_access_key,
                session_token,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_without_a_colon_is_a_bedrock_api_key() {
        assert_eq!(
            BedrockKey::parse("ABSKabc="),
            Ok(BedrockKey::ApiKey("ABSKabc="))
        );
        assert!(BedrockKey::parse("").is_err());
    }

    #[test]
    fn iam_credentials_split_into_at_most_three_parts() {
        assert_eq!(
            BedrockKey::parse("AKID:secret/+x"),
            Ok(BedrockKey::Sigv4 {
                access_key_id: "AKID",
                secret_access_key: "secret/+x",
                session_token: None
            })
        );
        assert_eq!(
            BedrockKey::parse("ASIA:s:tok:en"),
            Ok(BedrockKey::Sigv4 {
                access_key_id: "ASIA",
                secret_access_key: "s",
                session_token: Some("tok:en")
            })
        );
    }

    #[test]
    fn an_empty_part_is_refused() {
        for s in [":s", "a:", "a:s:", "::", ":"] {
            assert!(BedrockKey::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn debug_shows_the_access_key_id_and_never_any_secret() {
        let debug = format!("{:?}", BedrockKey::parse("AKID:hush:tok"));
        assert!(debug.contains("AKID") && !debug.contains("hush") && !debug.contains("tok"));
    }
}
