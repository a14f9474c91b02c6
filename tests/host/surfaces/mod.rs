//! The API surfaces' translations, over recorded pairs.

mod anthropic_translation;
mod prompt_cache;
