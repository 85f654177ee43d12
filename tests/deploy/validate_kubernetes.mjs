// Deploy.KubernetesManifestsPassTheApiSchemas (issue 18): every document of deploy/kubernetes/*.yaml
// is validated offline against the Kubernetes API schemas — the OpenAPI schemas of
// kubernetes-models (Kubernetes 1.31's API), by apiVersion and kind — so a manifest an API server
// would reject for a wrong type, a missing required field or a bad enum fails here. Those schemas
// do not reject unknown fields, which an API server's strict field validation (kubectl's default)
// does: a second pass walks each document against the model's TypeScript declarations and
// refuses any field they do not declare (a typo such as `sizelimit` would otherwise pass
// silently). Then the checks the schema cannot see (tandem's own rules: probes, /dev/shm, QoS,
// anti-affinity, security context, grace period). Negative cases show each layer able to fail.
//
//   node tests/deploy/validate_kubernetes.mjs [DIR]     (DIR: deploy/kubernetes by default)
// Needs `npm ci --prefix tests/deploy` (tools/install-test-tools.sh).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(process.argv[2] ?? path.join(here, "../../deploy/kubernetes"));
const require = createRequire(path.join(here, "package.json"));
const modelsDir = path.dirname(require.resolve("kubernetes-models/package.json"));

let failures = 0;
let passed = 0;
const fail = (what, msg) => {
  failures++;
  console.log(`FAIL ${what}: ${msg}`);
};
const pass = (what) => {
  passed++;
  console.log(`ok   ${what}`);
};

// --- the schemas ------------------------------------------------------------------------------

// "apps/v1" + "StatefulSet" → kubernetes-models/apps/v1/StatefulSet; "v1" (core) → v1/Service.
function modelPath(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") return null;
  const file = path.join(modelsDir, apiVersion, `${kind}.js`);
  return fs.existsSync(file) ? file : null;
}

function schemaErrors(doc) {
  const file = modelPath(doc.apiVersion, doc.kind);
  if (!file) return [`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`];
  const Model = require(file)[doc.kind];
  try {
    new Model(structuredClone(doc)).validate();
    return [];
  } catch (e) {
    if (!Array.isArray(e.errors)) throw e;
    return e.errors.map((x) => `${x.instancePath || "/"} ${x.message}`);
  }
}

// --- unknown fields, from the models' .d.ts declarations ---------------------------------------
// Each model file declares `export interface IName [extends TypeMeta] { "field"?: TYPE; ... }`
// with TYPE a primitive, an imported interface I..., Array<T>, { [key: string]: T } or an inline
// object type { "f"?: T; ... }, possibly over several lines.
function splitProps(body) {
  const props = new Map();
  const text = body.replace(/\/\*[\s\S]*?\*\//g, "");
  const re = /\s*"?([\w$.\/-]+)"?\??:\s*/y;
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /[\s;]/.test(text[i])) i++;
    if (i >= text.length) break;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) break;  // something else (an index signature is handled by the caller)
    let j = re.lastIndex;
    let depth = 0;
    for (; j < text.length; j++) {
      const ch = text[j];
      if (ch === "<" || ch === "{" || ch === "(") depth++;
      else if (ch === ">" || ch === "}" || ch === ")") depth--;
      else if (ch === ";" && depth === 0) break;
    }
    props.set(m[1], parseType(text.slice(re.lastIndex, j)));
    i = j + 1;
  }
  return props;
}

function parseType(raw) {
  const s = raw.replace(/\/\*[\s\S]*?\*\//g, "").trim();
  if (s.startsWith("Array<") && s.endsWith(">")) return { kind: "array", of: parseType(s.slice(6, -1)) };
  if (s.startsWith("{") && s.endsWith("}")) {
    const inner = s.slice(1, -1).trim();
    const map = inner.match(/^\[key: string\]:\s*([\s\S]*?);?$/);
    if (map) return { kind: "map", of: parseType(map[1]) };
    return { kind: "object", fields: splitProps(inner) };
  }
  if (/^I\w+$/.test(s)) return { kind: "ref", name: s };
  return { kind: "leaf" };
}

const declCache = new Map();
function declarationsOf(dtsFile) {
  if (declCache.has(dtsFile)) return declCache.get(dtsFile);
  const text = fs.readFileSync(dtsFile, "utf8");
  const imports = new Map();
  for (const m of text.matchAll(/import \{ (\w+) \} from "([^"]+)";/g)) {
    const spec = m[2];
    const target = spec.startsWith(".")
      ? path.resolve(path.dirname(dtsFile), spec + ".d.ts")
      : require.resolve(spec).replace(/\.(c?js|mjs)$/, ".d.ts");
    imports.set(m[1], target);
  }
  const body = text.match(/export interface \w+( extends TypeMeta)? \{([\s\S]*?)\n\}/);
  let type = { kind: "leaf" };  // not an object type (Quantity, IntOrString, Time)
  if (body) {
    type = { kind: "object", fields: splitProps(body[2]) };
    if (body[1]) {
      type.fields.set("apiVersion", { kind: "leaf" });
      type.fields.set("kind", { kind: "leaf" });
    }
  }
  const decl = { imports, type, name: path.basename(dtsFile, ".d.ts") };
  declCache.set(dtsFile, decl);
  return decl;
}

function unknownFields(value, type, decl, where, out) {
  if (value === null || typeof value !== "object") return;
  switch (type.kind) {
    case "array":
      if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, type.of, decl, `${where}/${i}`, out));
      return;
    case "map":
      for (const [k, v] of Object.entries(value)) unknownFields(v, type.of, decl, `${where}/${k}`, out);
      return;
    case "object":
      if (Array.isArray(value)) return;
      for (const [k, v] of Object.entries(value)) {
        const t = type.fields.get(k);
        if (t === undefined) out.push(`${where}/${k}: unknown field (not in ${decl.name})`);
        else unknownFields(v, t, decl, `${where}/${k}`, out);
      }
      return;
    case "ref": {
      const file = decl.imports.get(type.name);
      if (file) walkObject(value, file, where, out);
      return;
    }
    default:
      return;  // a primitive: the schema pass checks it
  }
}

function walkObject(value, dtsFile, where, out) {
  const decl = declarationsOf(dtsFile);
  unknownFields(value, decl.type, decl, where, out);
}

function strictErrors(doc) {
  const file = modelPath(doc.apiVersion, doc.kind);
  if (!file) return [];
  const out = [];
  walkObject(doc, file.replace(/\.js$/, ".d.ts"), "", out);
  return out;
}

// --- tandem's own rules ------------------------------------------------------------------------

function podSpecOf(doc) {
  return doc.kind === "StatefulSet" ? doc.spec?.template?.spec : null;
}

function flagValue(args, name) {
  for (let i = 0; i < (args ?? []).length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i].startsWith(name + "=")) return args[i].slice(name.length + 1);
  }
  return undefined;
}

// Kubernetes quantities (Mi, Gi, M, G, plain) and tandem's sizes (MiB, GiB, …) in bytes.
function bytes(q) {
  const m = String(q).match(/^(\d+(?:\.\d+)?)([KMGT]i?B?|[kMGT]|)$/);
  if (!m) return NaN;
  const unit = m[2].replace(/B$/, "");
  const pow = { "": 0, k: 1, K: 1, M: 2, G: 3, T: 4 }[unit[0] ?? ""] ?? 0;
  const base = unit.endsWith("i") || m[2].endsWith("B") ? 1024 : 1000;
  return Number(m[1]) * base ** pow;
}
function cpu(q) {
  const s = String(q);
  return s.endsWith("m") ? Number(s.slice(0, -1)) / 1000 : Number(s);
}

function semanticErrors(doc, all) {
  const errs = [];
  const spec = podSpecOf(doc);
  if (doc.kind === "StatefulSet") {
    if (!spec) return ["no pod template"];
    const c = spec.containers?.find((x) => x.command?.[0]?.endsWith("tandem-supervisor"));
    if (!c) return ["no container runs tandem-supervisor"];
    const args = c.args ?? [];
    const probe = (p, pathWanted, name) => {
      if (p?.httpGet?.path !== pathWanted) errs.push(`${name} must GET ${pathWanted}`);
      const port = p?.httpGet?.port;
      const portNumber = typeof port === "string" ? c.ports?.find((x) => x.name === port)?.containerPort : port;
      if (portNumber !== 6878) errs.push(`${name} must use port 6878 (the internal HTTP endpoint)`);
    };
    probe(c.startupProbe, "/readyz", "startupProbe");
    probe(c.readinessProbe, "/readyz", "readinessProbe");
    probe(c.livenessProbe, "/livez", "livenessProbe");
    const startupTimeout = Number(flagValue(args, "--startup-timeout") ?? 30);
    const sp = c.startupProbe ?? {};
    if ((sp.failureThreshold ?? 3) * (sp.periodSeconds ?? 10) <= startupTimeout)
      errs.push("startupProbe gives up before --startup-timeout");
    const http = flagValue(args, "--internal-http-listen-addr") ?? "127.0.0.1:6878";
    if (!http.startsWith("0.0.0.0:") && !http.startsWith("[::]:"))
      errs.push(`--internal-http-listen-addr ${http}: probes come from outside the pod`);
    const ctl = flagValue(args, "--controller-listen-addr") ?? "tcp://127.0.0.1:2101";
    const curve = flagValue(args, "--curve-secret-key") && flagValue(args, "--curve-authorized-keys");
    if (!/^tcp:\/\/127\.|^ipc:/.test(ctl) && !curve && !args.includes("--allow-insecure-endpoint"))
      errs.push(`--controller-listen-addr ${ctl} needs CURVE (the supervisor exits 78)`);

    // /dev/shm: a Memory emptyDir with a sizeLimit above --shm-size.
    const shmMount = c.volumeMounts?.find((m) => m.mountPath === "/dev/shm");
    const shmVol = spec.volumes?.find((v) => v.name === shmMount?.name);
    const shmSize = bytes(flagValue(args, "--shm-size") ?? "256MiB");
    if (!shmVol?.emptyDir) errs.push("/dev/shm must be an emptyDir");
    else {
      if (shmVol.emptyDir.medium !== "Memory") errs.push("/dev/shm emptyDir must have medium Memory");
      if (!shmVol.emptyDir.sizeLimit) errs.push("/dev/shm emptyDir needs a sizeLimit");
      else if (!(bytes(shmVol.emptyDir.sizeLimit) > shmSize))
        errs.push(`/dev/shm sizeLimit ${shmVol.emptyDir.sizeLimit} must exceed --shm-size`);
    }
    // Writable places under a read-only root: the runtime dir and the data dir are mounts.
    for (const flag of ["--runtime-dir", "--data-dir"]) {
      const p = flagValue(args, flag);
      if (!p) errs.push(`${flag} must be given (the root file system is read-only)`);
      else if (!c.volumeMounts?.some((m) => !m.readOnly && (p === m.mountPath || p.startsWith(m.mountPath + "/"))))
        errs.push(`${flag} ${p} is on no writable volume`);
    }

    // Guaranteed QoS: every container, init containers included, request == limit.
    for (const x of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const r of ["cpu", "memory"]) {
        const req = x.resources?.requests?.[r];
        const lim = x.resources?.limits?.[r];
        if (req === undefined || lim === undefined || (r === "cpu" ? cpu(req) !== cpu(lim) : bytes(req) !== bytes(lim)))
          errs.push(`${x.name}: ${r} request (${req}) must equal its limit (${lim})`);
      }
    }
    const memLimit = bytes(c.resources?.limits?.memory);
    if (shmVol?.emptyDir?.sizeLimit && !(memLimit > bytes(shmVol.emptyDir.sizeLimit)))
      errs.push("the memory limit must include the /dev/shm emptyDir (it is charged to the pod)");

    // Required anti-affinity across nodes, selecting this set's own pods.
    const terms = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    const labels = doc.spec.template.metadata?.labels ?? {};
    const own = terms.some(
      (t) =>
        t.topologyKey === "kubernetes.io/hostname" &&
        Object.entries(t.labelSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
        Object.keys(t.labelSelector?.matchLabels ?? {}).length > 0,
    );
    if (!own) errs.push("required podAntiAffinity on kubernetes.io/hostname over its own pods is missing");

    // Restricted security context (Pod Security Standards "restricted").
    const psc = spec.securityContext ?? {};
    if (psc.runAsNonRoot !== true) errs.push("pod securityContext.runAsNonRoot must be true");
    if (!(psc.runAsUser > 0)) errs.push("pod securityContext.runAsUser must be a non-root uid");
    if (psc.seccompProfile?.type !== "RuntimeDefault") errs.push("seccompProfile must be RuntimeDefault");
    for (const x of [...(spec.initContainers ?? []), ...spec.containers]) {
      const sc = x.securityContext ?? {};
      if (sc.allowPrivilegeEscalation !== false) errs.push(`${x.name}: allowPrivilegeEscalation must be false`);
      if (sc.readOnlyRootFilesystem !== true) errs.push(`${x.name}: readOnlyRootFilesystem must be true`);
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) errs.push(`${x.name}: capabilities must drop ALL`);
      if ((sc.capabilities?.add ?? []).length) errs.push(`${x.name}: no capabilities may be added`);
      if (sc.privileged) errs.push(`${x.name}: must not be privileged`);
    }

    // terminationGracePeriodSeconds >= --grace-period + time to remove the segment.
    const grace = Number(flagValue(args, "--grace-period") ?? 5);
    if (!(spec.terminationGracePeriodSeconds >= grace + 5))
      errs.push(`terminationGracePeriodSeconds ${spec.terminationGracePeriodSeconds} < --grace-period ${grace} + 5`);

    const ann = doc.spec.template.metadata?.annotations ?? {};
    if (ann["prometheus.io/scrape"] !== "true" || ann["prometheus.io/port"] !== "6878")
      errs.push("prometheus.io/scrape and prometheus.io/port 6878 annotations missing");
    if (doc.spec.podManagementPolicy !== "Parallel") errs.push("podManagementPolicy must be Parallel");
    const svc = all.find((d) => d.kind === "Service" && d.metadata?.name === doc.spec.serviceName);
    if (!svc) errs.push(`serviceName ${doc.spec.serviceName}: no such Service in the manifests`);
    else if (svc.spec?.clusterIP !== "None") errs.push(`Service ${svc.metadata.name} must be headless`);
    if (!all.some((d) => d.kind === "PodDisruptionBudget"))
      errs.push("no PodDisruptionBudget for the replica set");
  }
  if (doc.kind === "Service") {
    const ports = Object.fromEntries((doc.spec?.ports ?? []).map((p) => [p.name, p.port]));
    if (ports.controller !== 2101 || ports.http !== 6878) errs.push("Service ports must be controller 2101, http 6878");
  }
  if (doc.kind === "PodDisruptionBudget" && doc.spec?.maxUnavailable !== 1)
    errs.push("PodDisruptionBudget maxUnavailable must be 1");
  return errs;
}

// --- the manifests -----------------------------------------------------------------------------

function loadDocs(file) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
  const out = [];
  for (const d of docs) {
    if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join("; ")}`);
    const js = d.toJS();
    if (js !== null && js !== undefined) out.push(js);
  }
  return out;
}

const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
if (files.length === 0) {
  console.log(`FAIL no manifests in ${dir}`);
  process.exit(1);
}
const all = [];
for (const f of files) {
  let docs;
  try {
    docs = loadDocs(path.join(dir, f));
  } catch (e) {
    fail(f, `does not parse: ${e.message}`);
    continue;
  }
  for (const d of docs) all.push({ file: f, doc: d });
}

const kustomizations = all.filter((x) => x.doc.kind === "Kustomization");
for (const { file, doc } of kustomizations) {
  const missing = (doc.resources ?? []).filter((r) => !fs.existsSync(path.join(dir, r)));
  if (missing.length) fail(`${file} Kustomization`, `resources missing: ${missing.join(", ")}`);
  else pass(`${file} Kustomization: its ${doc.resources.length} resources exist`);
  const listed = new Set(doc.resources ?? []);
  for (const f of files) {
    if (f !== file && !listed.has(f)) fail(`${file} Kustomization`, `${f} is not among its resources`);
  }
}

const objects = all.filter((x) => x.doc.kind !== "Kustomization");
const docsOnly = objects.map((x) => x.doc);
for (const { file, doc } of objects) {
  const what = `${file} ${doc.kind}/${doc.metadata?.name}`;
  const errs = [...schemaErrors(doc), ...strictErrors(doc)];
  if (errs.length) fail(`${what} against the API schema`, errs.join("; "));
  else pass(`${what} passes the ${doc.apiVersion} ${doc.kind} schema (no unknown fields)`);
  const sem = semanticErrors(doc, docsOnly);
  if (sem.length) fail(`${what} tandem's rules`, sem.join("; "));
  else pass(`${what} follows tandem's rules`);
}
for (const kind of ["StatefulSet", "Service", "PodDisruptionBudget"]) {
  if (!docsOnly.some((d) => d.kind === kind)) fail("manifests", `no ${kind}`);
}

// --- negative cases: each layer must reject a broken copy ------------------------------------
const sts = docsOnly.find((d) => d.kind === "StatefulSet");
if (sts) {
  const mutate = (fn) => {
    const copy = structuredClone(sts);
    fn(copy);
    return copy;
  };
  const cases = [
    ["schema: replicas as a string", "schema", mutate((d) => (d.spec.replicas = "three"))],
    ["schema: a container without its required name", "schema",
      mutate((d) => delete d.spec.template.spec.containers[0].name)],
    ["schema: a probe port as a list", "schema",
      mutate((d) => (d.spec.template.spec.containers[0].livenessProbe.httpGet.port = [6878]))],
    ["strict: a misspelt field (sizelimit)", "strict",
      mutate((d) => {
        const v = d.spec.template.spec.volumes.find((x) => x.emptyDir?.medium === "Memory");
        v.emptyDir.sizelimit = v.emptyDir.sizeLimit;
        delete v.emptyDir.sizeLimit;
      })],
    ["strict: an unknown field in the pod spec", "strict",
      mutate((d) => (d.spec.template.spec.hostIPC2 = true))],
    ["rules: /dev/shm on disk", "rules",
      mutate((d) => d.spec.template.spec.volumes.forEach((v) => v.emptyDir && delete v.emptyDir.medium))],
    ["rules: readiness on /livez", "rules",
      mutate((d) => (d.spec.template.spec.containers[0].readinessProbe.httpGet.path = "/livez"))],
    ["rules: memory request below the limit", "rules",
      mutate((d) => (d.spec.template.spec.containers[0].resources.requests.memory = "1Gi"))],
    ["rules: preferred anti-affinity only", "rules",
      mutate((d) => delete d.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution)],
    ["rules: running as root", "rules",
      mutate((d) => (d.spec.template.spec.securityContext.runAsNonRoot = false))],
    ["rules: grace period below --grace-period", "rules",
      mutate((d) => (d.spec.template.spec.terminationGracePeriodSeconds = 3))],
  ];
  for (const [name, layer, doc] of cases) {
    const errs =
      layer === "schema" ? schemaErrors(doc) : layer === "strict" ? strictErrors(doc) : semanticErrors(doc, docsOnly);
    if (errs.length) pass(`negative case rejected (${name}): ${errs[0]}`);
    else fail(`negative case (${name})`, `the ${layer} check accepted it`);
  }
}

console.log(`${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
