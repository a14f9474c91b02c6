//! The foundation on workerd: the basics, sealing and hostile input, isolation between tenants,
//! upstream calls, request checks, and revocation across isolates.

mod basics;
mod isolation;
mod request_checks;
mod revocation;
mod sealing;
mod upstream;
