//! Whose name-level settings a request reads (`on_refusal`, `cache_affinity_s`, `cache_ttl_s`,
//! `prompt_cache`): the matched rule's if a rule matched, else the requested alias's. A bare
//! model, or a name that is neither, has none. A rule's chain may list aliases with settings of
//! their own; the rule that gives the chain decides for all of them.

use super::resolve::{lookup, Target};
use crate::config::{Alias, Chain, TenantConfig};

#[derive(Debug, Clone, Copy)]
pub enum SettingsOwner<'c> {
    Rule(&'c Chain),
    Alias(&'c Alias),
    Neither,
}

impl<'c> SettingsOwner<'c> {
    /// The owner for `requested` once its rule (`None`: no rule matched) is known.
    pub fn of(cfg: &'c TenantConfig, requested: &str, rule: Option<&'c Chain>) -> Self {
        match rule {
            Some(chain) => Self::Rule(chain),
            None => match lookup(cfg, requested) {
                Some(Target::Alias(_, alias)) => Self::Alias(alias),
                _ => Self::Neither,
            },
        }
    }

    /// The setting as the rule or the alias holds it; `None` when neither owns the name.
    pub fn read<T>(
        self,
        rule: impl FnOnce(&Chain) -> T,
        alias: impl FnOnce(&Alias) -> T,
    ) -> Option<T> {
        match self {
            Self::Rule(chain) => Some(rule(chain)),
            Self::Alias(a) => Some(alias(a)),
            Self::Neither => None,
        }
    }
}
