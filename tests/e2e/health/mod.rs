//! Provider health on workerd: breakers, the scheduled pass, alerts, and the fault matrix.

mod active_health;
mod alerts_hardening;
mod breakers;
mod faults;
mod providers_health;
