//! Creating a CustomResourceDefinition and using the new kind with kubectl.

use crate::harness::*;

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gpujobs.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gpujobs, singular: gpujob, kind: GpuJob, shortNames: [gj]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: GPUS, type: integer, jsonPath: .spec.gpus}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [gpus]
            properties:
              gpus: {type: integer, minimum: 1}
              model: {type: string, default: llama}
"#;

#[test]
fn create_a_crd_and_use_the_new_kind() {
    let flotilla = Flotilla::start();
    let crd = flotilla.file("crd.yaml", CRD);
    for version in VERSIONS {
        flotilla.ok(version, &["apply", "-f", &crd]);
        let ns = format!("crd-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let cr = flotilla.file(
            &format!("{ns}.yaml"),
            "apiVersion: example.com/v1\nkind: GpuJob\nmetadata: {name: train}\nspec: {gpus: 8}\n",
        );
        let out = flotilla.ok(version, &["apply", "-n", &ns, "-f", &cr]);
        assert!(
            out.contains("gpujob.example.com/train created"),
            "kubectl.{version}: {out}"
        );
        let table = flotilla.ok(version, &["get", "gj", "-n", &ns]);
        assert!(
            table.contains("GPUS") && table.contains('8'),
            "kubectl.{version}: {table}"
        );
        let model = flotilla.ok(
            version,
            &[
                "get",
                "gpujob",
                "train",
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.model}",
            ],
        );
        assert_eq!(model, "llama", "the schema default is applied");
        let bad = flotilla.file(
            &format!("{ns}-bad.yaml"),
            "apiVersion: example.com/v1\nkind: GpuJob\nmetadata: {name: bad}\nspec: {gpus: 0}\n",
        );
        let error = flotilla.fails(version, &["apply", "-n", &ns, "-f", &bad]);
        assert!(error.contains("spec.gpus"), "kubectl.{version}: {error}");
    }
}
