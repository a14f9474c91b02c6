//! The cloud platforms on workerd: each kind's wire rules against a mock that holds the gateway
//! to them, and the platform every provider runs on (`X-CogniGate-Platform`, the platform pin).

mod azure;
mod bedrock;
mod claude_chain;
mod gemini;
mod pin;
mod restrictions;
mod vertex;
