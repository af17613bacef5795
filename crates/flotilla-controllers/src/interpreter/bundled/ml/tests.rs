//! Tests of this group's bundled customizations (behaviour a user relies on, per kind).

mod flink;
mod ray_service;
mod spark;
