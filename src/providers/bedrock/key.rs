//! A Bedrock provider key as stored: a Bedrock API key (sent as a bearer token), or IAM
//! credentials that sign each request with SigV4.

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
        let mut parts = secret.splitn(3, ':');
        let (Some(first), Some(second)) = (parts.next(), parts.next()) else {
            return Ok(Self::ApiKey(secret));
        };
        let token = parts.next();
        if first.is_empty() || second.is_empty() || token == Some("") {
            return Err("a Bedrock IAM key is access_key_id:secret_access_key[:session_token], no part empty");
        }
        Ok(Self::Sigv4 {
            access_key_id: first,
            secret_access_key: second,
            session_token: token,
        })
    }
}

/// What identifies a key in admin views: the access key id of IAM credentials (public by AWS's
/// design). A Bedrock API key has no public part, so it gets no label.
pub fn key_label(secret: &str) -> Option<String> {
    match BedrockKey::parse(secret) {
        Ok(BedrockKey::Sigv4 { access_key_id, .. }) => Some(access_key_id.to_owned()),
        _ => None,
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
    fn the_label_is_the_access_key_id_and_never_any_secret() {
        assert_eq!(
            key_label("AKIDEXAMPLE:wJalr:TOKEN").as_deref(),
            Some("AKIDEXAMPLE")
        );
        assert_eq!(key_label("ABSKsecret"), None);
        assert_eq!(key_label("a:"), None);
        let debug = format!("{:?}", BedrockKey::parse("AKID:hush:tok"));
        assert!(debug.contains("AKID") && !debug.contains("hush") && !debug.contains("tok"));
    }
}
