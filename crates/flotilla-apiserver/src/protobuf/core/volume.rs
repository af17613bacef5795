//! Field tables for core `v1` Volume and its sources, projections and PersistentVolumeClaim templates.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::super::json::message;
use k8s_pb::api::core::v1 as pb;

message!(pb::AwsElasticBlockStoreVolumeSource {
    req volume_id "volumeID",
    opt fs_type "fsType",
    opt partition "partition",
    opt read_only "readOnly",
});

message!(pb::AzureDiskVolumeSource {
    req disk_name "diskName",
    req disk_uri "diskURI",
    ptr caching_mode "cachingMode",
    ptr fs_type "fsType",
    ptr read_only "readOnly",
    ptr kind "kind",
});

message!(pb::AzureFileVolumeSource {
    req secret_name "secretName",
    req share_name "shareName",
    opt read_only "readOnly",
});

message!(pb::CSIVolumeSource {
    req driver "driver",
    ptr read_only "readOnly",
    ptr fs_type "fsType",
    opt volume_attributes "volumeAttributes",
    ptr node_publish_secret_ref "nodePublishSecretRef",
});

message!(pb::CephFsVolumeSource {
    req monitors "monitors",
    opt path "path",
    opt user "user",
    opt secret_file "secretFile",
    ptr secret_ref "secretRef",
    opt read_only "readOnly",
});

message!(pb::CinderVolumeSource {
    req volume_id "volumeID",
    opt fs_type "fsType",
    opt read_only "readOnly",
    ptr secret_ref "secretRef",
});

message!(pb::ClusterTrustBundleProjection {
    ptr name "name",
    ptr signer_name "signerName",
    ptr label_selector "labelSelector",
    ptr optional "optional",
    req path "path",
});

message!(pb::ConfigMapProjection {
    inline local_object_reference,
    opt items "items",
    ptr optional "optional",
});

message!(pb::ConfigMapVolumeSource {
    inline local_object_reference,
    opt items "items",
    ptr default_mode "defaultMode",
    ptr optional "optional",
});

message!(pb::DownwardAPIProjection {
    opt items "items",
});

message!(pb::DownwardAPIVolumeFile {
    req path "path",
    ptr field_ref "fieldRef",
    ptr resource_field_ref "resourceFieldRef",
    ptr mode "mode",
});

message!(pb::DownwardAPIVolumeSource {
    opt items "items",
    ptr default_mode "defaultMode",
});

message!(pb::EmptyDirVolumeSource {
    opt medium "medium",
    ptr size_limit "sizeLimit",
});

message!(pb::EphemeralVolumeSource {
    ptr volume_claim_template "volumeClaimTemplate",
});

message!(pb::FcVolumeSource {
    opt target_ww_ns "targetWWNs",
    ptr lun "lun",
    opt fs_type "fsType",
    opt read_only "readOnly",
    opt wwids "wwids",
});

message!(pb::FlexVolumeSource {
    req driver "driver",
    opt fs_type "fsType",
    ptr secret_ref "secretRef",
    opt read_only "readOnly",
    opt options "options",
});

message!(pb::FlockerVolumeSource {
    opt dataset_name "datasetName",
    opt dataset_uuid "datasetUUID",
});

message!(pb::GcePersistentDiskVolumeSource {
    req pd_name "pdName",
    opt fs_type "fsType",
    opt partition "partition",
    opt read_only "readOnly",
});

message!(pb::GitRepoVolumeSource {
    req repository "repository",
    opt revision "revision",
    opt directory "directory",
});

message!(pb::GlusterfsVolumeSource {
    req endpoints "endpoints",
    req path "path",
    opt read_only "readOnly",
});

message!(pb::HostPathVolumeSource {
    req path "path",
    ptr r#type "type",
});

message!(pb::ImageVolumeSource {
    opt reference "reference",
    opt pull_policy "pullPolicy",
});

message!(pb::IscsiVolumeSource {
    req target_portal "targetPortal",
    req iqn "iqn",
    req lun "lun",
    opt iscsi_interface "iscsiInterface",
    opt fs_type "fsType",
    opt read_only "readOnly",
    opt portals "portals",
    opt chap_auth_discovery "chapAuthDiscovery",
    opt chap_auth_session "chapAuthSession",
    ptr secret_ref "secretRef",
    ptr initiator_name "initiatorName",
});

message!(pb::KeyToPath {
    req key "key",
    req path "path",
    ptr mode "mode",
});

message!(pb::NfsVolumeSource {
    req server "server",
    req path "path",
    opt read_only "readOnly",
});

message!(pb::PersistentVolumeClaimSpec {
    opt access_modes "accessModes",
    ptr selector "selector",
    opt resources "resources",
    opt volume_name "volumeName",
    ptr storage_class_name "storageClassName",
    ptr volume_mode "volumeMode",
    ptr data_source "dataSource",
    ptr data_source_ref "dataSourceRef",
    ptr volume_attributes_class_name "volumeAttributesClassName",
});

message!(pb::PersistentVolumeClaimTemplate {
    opt metadata "metadata",
    req spec "spec",
});

message!(pb::PersistentVolumeClaimVolumeSource {
    req claim_name "claimName",
    opt read_only "readOnly",
});

message!(pb::PhotonPersistentDiskVolumeSource {
    req pd_id "pdID",
    opt fs_type "fsType",
});

message!(pb::PodCertificateProjection {
    opt signer_name "signerName",
    opt key_type "keyType",
    ptr max_expiration_seconds "maxExpirationSeconds",
    opt credential_bundle_path "credentialBundlePath",
    opt key_path "keyPath",
    opt certificate_chain_path "certificateChainPath",
    opt user_annotations "userAnnotations",
});

message!(pb::PortworxVolumeSource {
    req volume_id "volumeID",
    opt fs_type "fsType",
    opt read_only "readOnly",
});

message!(pb::ProjectedVolumeSource {
    req sources "sources",
    ptr default_mode "defaultMode",
});

message!(pb::QuobyteVolumeSource {
    req registry "registry",
    req volume "volume",
    opt read_only "readOnly",
    opt user "user",
    opt group "group",
    opt tenant "tenant",
});

message!(pb::RbdVolumeSource {
    req monitors "monitors",
    req image "image",
    opt fs_type "fsType",
    opt pool "pool",
    opt user "user",
    opt keyring "keyring",
    ptr secret_ref "secretRef",
    opt read_only "readOnly",
});

message!(pb::ScaleIoVolumeSource {
    req gateway "gateway",
    req system "system",
    ptr secret_ref "secretRef",
    opt ssl_enabled "sslEnabled",
    opt protection_domain "protectionDomain",
    opt storage_pool "storagePool",
    opt storage_mode "storageMode",
    opt volume_name "volumeName",
    opt fs_type "fsType",
    opt read_only "readOnly",
});

message!(pb::SecretProjection {
    inline local_object_reference,
    opt items "items",
    ptr optional "optional",
});

message!(pb::SecretVolumeSource {
    opt secret_name "secretName",
    opt items "items",
    ptr default_mode "defaultMode",
    ptr optional "optional",
});

message!(pb::ServiceAccountTokenProjection {
    opt audience "audience",
    ptr expiration_seconds "expirationSeconds",
    req path "path",
});

message!(pb::StorageOsVolumeSource {
    opt volume_name "volumeName",
    opt volume_namespace "volumeNamespace",
    opt fs_type "fsType",
    opt read_only "readOnly",
    ptr secret_ref "secretRef",
});

message!(pb::TypedLocalObjectReference {
    ptr api_group "apiGroup",
    req kind "kind",
    req name "name",
});

message!(pb::TypedObjectReference {
    ptr api_group "apiGroup",
    req kind "kind",
    req name "name",
    ptr namespace "namespace",
});

message!(pb::Volume {
    req name "name",
    inline volume_source,
});

message!(pb::VolumeProjection {
    ptr secret "secret",
    ptr downward_api "downwardAPI",
    ptr config_map "configMap",
    ptr service_account_token "serviceAccountToken",
    ptr cluster_trust_bundle "clusterTrustBundle",
    ptr pod_certificate "podCertificate",
});

message!(pb::VolumeResourceRequirements {
    opt limits "limits",
    opt requests "requests",
});

message!(pb::VolumeSource {
    ptr host_path "hostPath",
    ptr empty_dir "emptyDir",
    ptr gce_persistent_disk "gcePersistentDisk",
    ptr aws_elastic_block_store "awsElasticBlockStore",
    ptr git_repo "gitRepo",
    ptr secret "secret",
    ptr nfs "nfs",
    ptr iscsi "iscsi",
    ptr glusterfs "glusterfs",
    ptr persistent_volume_claim "persistentVolumeClaim",
    ptr rbd "rbd",
    ptr flex_volume "flexVolume",
    ptr cinder "cinder",
    ptr cephfs "cephfs",
    ptr flocker "flocker",
    ptr downward_api "downwardAPI",
    ptr fc "fc",
    ptr azure_file "azureFile",
    ptr config_map "configMap",
    ptr vsphere_volume "vsphereVolume",
    ptr quobyte "quobyte",
    ptr azure_disk "azureDisk",
    ptr photon_persistent_disk "photonPersistentDisk",
    ptr projected "projected",
    ptr portworx_volume "portworxVolume",
    ptr scale_io "scaleIO",
    ptr storageos "storageos",
    ptr csi "csi",
    ptr ephemeral "ephemeral",
    ptr image "image",
});

message!(pb::VsphereVirtualDiskVolumeSource {
    req volume_path "volumePath",
    opt fs_type "fsType",
    opt storage_policy_name "storagePolicyName",
    opt storage_policy_id "storagePolicyID",
});
