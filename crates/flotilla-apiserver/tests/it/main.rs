//! Integration tests of the API server, through its tower service: raw HTTP requests and a
//! kube-rs client over the in-process service.

mod support;

mod api_services;
mod auth;
mod compact;
mod crd;
mod defaults;
mod deletion_protection;
mod discovery;
mod endpoint_slices;
mod escalation;
mod event_ttl;
mod events;
mod events_store;
mod fieldvalidation;
mod fuzz;
mod gc;
mod http_api;
mod immutable;
mod karmada;
mod kube_rs;
mod kubelet;
mod kubernetes_service;
mod managed_status;
mod openapi_v2;
mod printers;
mod priority_class;
mod request_metrics;
mod resource_metrics;
mod stale_cache;
mod status_spec;
mod untracked;
mod watch;
