#!/usr/bin/env python3
"""Dev-time generator of the protobuf field tables (the `message!` invocations).

Not part of the build. Run it when k8s-pb is upgraded, from a checkout of k8s.io/api and
k8s.io/apimachinery at the tag k8s-pb was built from (no field-count mismatch warnings means
the tag is right):

    python3 codegen.py --k8s-pb ~/.cargo/registry/src/<index>/k8s-pb-0.9.0/src \
        --api ../api --apimachinery ../apimachinery --tag v0.35.7 --out .

For every message reachable from ROOTS it reads the k8s-pb prost struct (field names and
numbers) and the Go struct's `json` and `protobuf` tags (JSON name, omitempty, pointer, inline),
matches them by field number and writes one table per struct, grouped by API group.
"""
import argparse, re, subprocess, sys, os, collections

ap = argparse.ArgumentParser()
ap.add_argument('--k8s-pb', required=True, help='k8s-pb src directory')
ap.add_argument('--api', required=True, help='git checkout of k8s.io/api')
ap.add_argument('--apimachinery', required=True, help='git checkout of k8s.io/apimachinery')
ap.add_argument('--tag', required=True, help='release tag both repositories are read at')
ap.add_argument('--out', required=True, help='the src/protobuf directory')
args = ap.parse_args()
PB, API, MACH, TAG, CRATE = args.k8s_pb, args.api, args.apimachinery, args.tag, args.out

SPECIAL = {('apimachinery/pkg/apis/meta/v1', n) for n in ['Time', 'MicroTime', 'FieldsV1', 'Duration']} | {
    ('apimachinery/pkg/api/resource', 'Quantity'), ('apimachinery/pkg/util/intstr', 'IntOrString'),
    ('apimachinery/pkg/runtime', 'RawExtension'),
    ('api/authentication/v1', 'ExtraValue'), ('api/authorization/v1', 'ExtraValue')}  # special.rs

ROOTS = [
    ('api/core/v1', ['Namespace', 'ConfigMap', 'Secret', 'Service', 'ServiceAccount', 'ResourceQuota', 'Pod', 'PodTemplate', 'LimitRange', 'PersistentVolumeClaim', 'ReplicationController', 'Endpoints', 'Node']),
    ('api/apps/v1', ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']),
    ('api/batch/v1', ['Job', 'CronJob']),
    ('api/rbac/v1', ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']),
    ('api/networking/v1', ['Ingress', 'IngressClass', 'NetworkPolicy']),
    ('api/policy/v1', ['PodDisruptionBudget', 'Eviction']),
    ('api/scheduling/v1', ['PriorityClass']),
    ('api/authentication/v1', ['TokenRequest', 'SelfSubjectReview', 'TokenReview']),
    ('api/authorization/v1', ['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview']),
    ('api/coordination/v1', ['Lease']),
    ('api/autoscaling/v1', ['Scale']),
    ('apimachinery/pkg/apis/meta/v1', ['DeleteOptions']),
]

def parse_pb(mod):
    src = open(f'{PB}/{mod}/mod.rs').read()
    structs = {}
    for m in re.finditer(r'pub struct (\w+) \{(.*?)\n\}', src, re.S):
        name, body = m.group(1), m.group(2) + '\n'
        fields = []
        body = '\n'.join(l for l in body.split('\n') if not l.strip().startswith('///'))
        for f in re.finditer(r'#\[prost\((.*?)tag = "(\d+)"\)\]\s*pub (r#)?(\w+):\s*(.*?),\n', body, re.S):
            fields.append(dict(kind=f.group(1), tag=int(f.group(2)), name=(f.group(3) or '') + f.group(4), ty=' '.join(f.group(5).split())))
        structs[name] = fields
    return structs

def resolve(mod, ty):
    """Return list of (mod, Name) message types referenced by a Rust type string."""
    out = []
    for p in re.findall(r'((?:super::)*(?:\w+::)*[A-Z]\w*)', ty):
        segs = p.split('::')
        name = segs[-1]
        if name in ('Option', 'Vec', 'BTreeMap', 'String'):
            continue
        if segs[0] in ('core', 'prost', 'alloc', 'collections', 'option', 'vec', 'string'):
            continue
        base = mod.split('/')
        i = 0
        while segs[i] == 'super':
            base = base[:-1]; i += 1
        path = base + segs[i:-1]
        out.append(('/'.join(path), name))
    return out

def go_dir(mod):
    if mod.startswith('api/'):
        return API, mod[4:]
    return MACH, mod[len('apimachinery/'):]

def parse_go(mod):
    repo, d = go_dir(mod)
    files = subprocess.run(['git', '-C', repo, 'ls-tree', '--name-only', f'{TAG}:{d}'], capture_output=True, text=True).stdout.split()
    structs = {}
    for f in files:
        if not f.endswith('.go') or f.endswith('_test.go') or f.startswith('zz_') or f == 'generated.pb.go':
            continue
        src = subprocess.run(['git', '-C', repo, 'show', f'{TAG}:{d}/{f}'], capture_output=True, text=True).stdout
        for m in re.finditer(r'^type (\w+) struct \{(.*?)^\}', src, re.S | re.M):
            fields = []
            for line in m.group(2).split('\n'):
                line = line.strip()
                if line.startswith('//'):
                    continue
                fm = re.match(r'^(?:(\w+)\s+)?(\S+)\s+`(.*)`', line)
                if not fm:
                    continue
                tags = dict(re.findall(r'(\w+):"([^"]*)"', fm.group(3)))
                if "protobuf" not in tags or len(tags["protobuf"].split(",")) < 2:
                    continue
                js = tags.get('json', '')
                jparts = js.split(',')
                pparts = tags['protobuf'].split(',')
                fields.append(dict(go=fm.group(1) or fm.group(2), gotype=fm.group(2), json=jparts[0],
                                   omitempty='omitempty' in jparts[1:], inline='inline' in jparts[1:],
                                   tag=int(pparts[1])))
            structs[m.group(1).lower()] = (m.group(1), fields)
    return structs

pb_cache, go_cache = {}, {}
def pb(mod):
    if mod not in pb_cache: pb_cache[mod] = parse_pb(mod)
    return pb_cache[mod]
def go(mod):
    if mod not in go_cache: go_cache[mod] = parse_go(mod)
    return go_cache[mod]

seen = collections.OrderedDict()
queue = [(m, n) for m, ns in ROOTS for n in ns]
while queue:
    key = queue.pop(0)
    if key in seen or key in SPECIAL:
        continue
    mod, name = key
    fields = pb(mod)[name]
    seen[key] = fields
    for f in fields:
        if 'message' in f['kind'] or 'btree_map' in f['kind']:
            queue.extend(resolve(mod, f['ty']))

warnings = []
by_mod = collections.defaultdict(list)
for (mod, name), fields in seen.items():
    gos = go(mod).get(name.lower())
    if gos is None:
        warnings.append(f'no Go struct for {mod} {name}')
        continue
    goname, gfields = gos
    bytag = {f['tag']: f for f in fields}
    lines = []
    used = set()
    for g in gfields:
        f = bytag.get(g['tag'])
        if f is None:
            warnings.append(f'{mod} {name}: Go field {g["go"]} tag {g["tag"]} missing in pb')
            continue
        used.add(g['tag'])
        if g['json'] == '-':
            lines.append(f'        skip {f["name"]},')
            continue
        if g['inline']:
            mode = 'inline'
        elif g['gotype'].startswith('*'):
            mode = 'ptr'
        elif g['omitempty']:
            mode = 'opt'
        else:
            mode = 'req'
        if mode == 'inline':
            lines.append(f'        inline {f["name"]},')
        else:
            lines.append(f'        {mode} {f["name"]} "{g["json"]}",')
    for f in fields:
        if f['tag'] not in used:
            warnings.append(f'{mod} {name}: pb field {f["name"]} tag {f["tag"]} not in Go')
            lines.append(f'        skip {f["name"]},')
    by_mod[mod].append((name, lines))

for w in warnings:
    print('WARN', w, file=sys.stderr)
print({m: len(i) for m, i in by_mod.items()}, file=sys.stderr)

# ---- write crate files
FILES = {
    'api/apps/v1': ('apps', 'k8s_pb::api::apps::v1', '`apps/v1`: Deployment, StatefulSet, DaemonSet, ReplicaSet.'),
    'api/batch/v1': ('batch', 'k8s_pb::api::batch::v1', '`batch/v1`: Job, CronJob.'),
    'api/rbac/v1': ('rbac', 'k8s_pb::api::rbac::v1', '`rbac.authorization.k8s.io/v1`: Role, ClusterRole and their bindings.'),
    'api/networking/v1': ('networking', 'k8s_pb::api::networking::v1', '`networking.k8s.io/v1`: Ingress, IngressClass, NetworkPolicy.'),
    'api/policy/v1': ('policy', 'k8s_pb::api::policy::v1', '`policy/v1`: PodDisruptionBudget, Eviction.'),
    'api/scheduling/v1': ('scheduling', 'k8s_pb::api::scheduling::v1', '`scheduling.k8s.io/v1`: PriorityClass.'),
    'api/authentication/v1': ('authentication', 'k8s_pb::api::authentication::v1', '`authentication.k8s.io/v1`: TokenRequest, TokenReview, SelfSubjectReview.'),
    'api/authorization/v1': ('authorization', 'k8s_pb::api::authorization::v1', '`authorization.k8s.io/v1`: the access reviews.'),
    'api/coordination/v1': ('coordination', 'k8s_pb::api::coordination::v1', '`coordination.k8s.io/v1`: Lease.'),
    'api/autoscaling/v1': ('autoscaling', 'k8s_pb::api::autoscaling::v1', '`autoscaling/v1`: Scale.'),
    'apimachinery/pkg/apis/meta/v1': ('meta', 'k8s_pb::apimachinery::pkg::apis::meta::v1', '`meta.k8s.io/v1`: ObjectMeta, LabelSelector, DeleteOptions and friends.'),
}
VOLUME = re.compile(r'(VolumeSource|Projection|^KeyToPath$|^DownwardAPIVolumeFile$|^Volume$|^PersistentVolumeClaim(Template|Spec)$|^Typed(Local)?ObjectReference$|^VolumeResourceRequirements$)')
CONTAINER = re.compile(r'^(Container|EnvVar|EnvFrom|ConfigMapEnvSource|SecretEnvSource|ConfigMapKeySelector|SecretKeySelector|FileKeySelector|ObjectFieldSelector|ResourceFieldSelector|Probe|ExecAction|HttpGetAction|HttpHeader|TcpSocketAction|GrpcAction|SleepAction|Lifecycle|SecurityContext|Capabilities|SeLinuxOptions|WindowsSecurityContextOptions|SeccompProfile|AppArmorProfile|ResourceRequirements|ResourceClaim$|VolumeMount|VolumeDevice|EphemeralContainer|LinuxContainerUser|ResourceStatus|ResourceHealth)')
POD = re.compile(r'^(Pod|Affinity|NodeAffinity|NodeSelector|PreferredSchedulingTerm|WeightedPodAffinityTerm|Toleration|HostAlias|HostIp|Sysctl|TopologySpreadConstraint|WorkloadReference)')
CORE_FILES = {
    'core': 'core `v1` objects other than pods: Namespace, ConfigMap, Secret, Service, ServiceAccount, ResourceQuota, LimitRange, Endpoints, ReplicationController, references.',
    'core/pod': 'core `v1` Pod, PodSpec, PodTemplateSpec and scheduling constraints (affinity, tolerations, topology spread).',
    'core/container': 'core `v1` Container and what hangs off it: env, ports, resources, probes, lifecycle, security context.',
    'core/volume': 'core `v1` Volume and its sources, projections and PersistentVolumeClaim templates.',
}
def core_file(name):
    if VOLUME.search(name): return 'core/volume'
    if CONTAINER.search(name): return 'core/container'
    if POD.search(name): return 'core/pod'
    return 'core'

outputs = collections.defaultdict(list)
for mod, items in by_mod.items():
    for name, lines in sorted(items):
        if mod == 'api/core/v1':
            key, use = core_file(name), 'k8s_pb::api::core::v1'
        else:
            key, use = FILES[mod][0], FILES[mod][1]
        outputs[(key, use)].append(f'message!(pb::{name} {{\n' + '\n'.join(l.replace('        ', '    ', 1) for l in lines) + '\n});\n')
for (key, use), blocks in outputs.items():
    doc = CORE_FILES.get(key) or next(v[2] for v in FILES.values() if v[0] == key)
    head = (f'//! Field tables for {doc}\n//!\n'
            f'//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery\n'
            f'//! {TAG} (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.\n\n'
            f'use super::{"super::" if "/" in key else ""}json::message;\nuse {use} as pb;\n\n'
            + ('mod container;\nmod pod;\nmod volume;\n\n' if key == 'core' else ''))
    path = f'{CRATE}/{key}.rs'
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as fh:
        fh.write(head + '\n'.join(blocks))
