// The chart's promises, checked on the decoded objects: hardening, probes, the shutdown budget,
// and that every cross-reference between objects (names, ports, selectors, secret keys) holds.
package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

type checker struct{ errs []error }

func (c *checker) failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func checkInvariants(r *rendered) []error {
	c := &checker{}
	if r.deployment == nil || r.configMap == nil || r.service == nil {
		c.failf("a Deployment, a ConfigMap and a Service are always rendered")
		return c.errs
	}
	pod := r.deployment.Spec.Template
	cfg := r.configMap.Data
	containers := pod.Spec.Containers
	if len(containers) != 1 {
		c.failf("deployment: want one container, got %d", len(containers))
		return c.errs
	}
	ctr := containers[0]

	checkPodHardening(c, &pod.Spec)
	checkContainerHardening(c, &ctr)
	checkTmp(c, &pod.Spec, &ctr)

	if cfg["TETHER_HOST"] != "0.0.0.0" {
		c.failf("configmap: TETHER_HOST must be 0.0.0.0 in a pod, got %q", cfg["TETHER_HOST"])
	}
	grpcPort := containerPort(c, &ctr, "grpc", cfg["TETHER_PORT"])
	containerPort(c, &ctr, "metrics", cfg["TETHER_METRICS_PORT"])
	checkProbes(c, &ctr, grpcPort, cfg["TETHER_TLS_CERT_FILE"] != "")
	checkGrace(c, &pod.Spec, &ctr, cfg["TETHER_DRAIN_TIMEOUT_MS"])
	checkEnv(c, r, &ctr)

	if pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
		c.failf("deployment: enableServiceLinks must be false (service links inject TETHER_PORT)")
	}
	for _, key := range []string{"checksum/config", "checksum/secret"} {
		if pod.Annotations[key] == "" {
			c.failf("deployment: pod annotation %s missing (config changes would not roll pods)", key)
		}
	}
	podLabels := labels.Set(pod.Labels)
	if !selects(c, "deployment selector", r.deployment.Spec.Selector, podLabels) {
		return c.errs
	}
	for i, tsc := range pod.Spec.TopologySpreadConstraints {
		selects(c, fmt.Sprintf("topologySpreadConstraints[%d]", i), tsc.LabelSelector, podLabels)
	}
	checkService(c, r, podLabels)
	if r.pdb != nil {
		selects(c, "pdb selector", r.pdb.Spec.Selector, podLabels)
		if (r.pdb.Spec.MinAvailable == nil) == (r.pdb.Spec.MaxUnavailable == nil) {
			c.failf("pdb: exactly one of minAvailable and maxUnavailable")
		}
	}
	if r.hpa != nil {
		ref := r.hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.Name != r.deployment.Name || ref.APIVersion != "apps/v1" {
			c.failf("hpa: scaleTargetRef %+v does not name the Deployment %q", ref, r.deployment.Name)
		}
		if r.deployment.Spec.Replicas != nil {
			c.failf("deployment: replicas must be left to the HPA")
		}
	} else if r.deployment.Spec.Replicas == nil {
		c.failf("deployment: replicas missing without an HPA")
	}
	if sm := r.serviceMonitor; sm != nil {
		selects(c, "servicemonitor selector", &sm.Spec.Selector, labels.Set(r.service.Labels))
		for _, ep := range sm.Spec.Endpoints {
			if servicePort(r.service, ep.Port) == nil {
				c.failf("servicemonitor: endpoint port %q is not a Service port", ep.Port)
			}
		}
	}
	if d := r.dashboard; d != nil {
		checkDashboard(c, d)
	}
	if r.serviceAccount != nil && r.serviceAccount.Name != pod.Spec.ServiceAccountName {
		c.failf("deployment: serviceAccountName %q, ServiceAccount %q", pod.Spec.ServiceAccountName, r.serviceAccount.Name)
	}
	return c.errs
}

func checkPodHardening(c *checker, spec *corev1.PodSpec) {
	sc := spec.SecurityContext
	if sc == nil {
		c.failf("pod: securityContext missing")
		return
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		c.failf("pod: runAsNonRoot must be true")
	}
	if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		c.failf("pod: runAsUser must be set and not 0")
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.failf("pod: seccompProfile must be RuntimeDefault")
	}
}

func checkContainerHardening(c *checker, ctr *corev1.Container) {
	sc := ctr.SecurityContext
	if sc == nil {
		c.failf("container: securityContext missing")
		return
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		c.failf("container: runAsNonRoot must be true")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		c.failf("container: readOnlyRootFilesystem must be true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		c.failf("container: allowPrivilegeEscalation must be false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		c.failf("container: privileged must not be true")
	}
	dropsAll := false
	if sc.Capabilities != nil {
		for _, capability := range sc.Capabilities.Drop {
			dropsAll = dropsAll || capability == "ALL"
		}
		if len(sc.Capabilities.Add) > 0 {
			c.failf("container: adds capabilities %v", sc.Capabilities.Add)
		}
	}
	if !dropsAll {
		c.failf("container: capabilities must drop ALL")
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.failf("container: seccompProfile must be RuntimeDefault")
	}
}

// The root filesystem is read-only; /tmp is the one writable path and must be an emptyDir.
func checkTmp(c *checker, spec *corev1.PodSpec, ctr *corev1.Container) {
	for _, m := range ctr.VolumeMounts {
		if m.MountPath != "/tmp" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && !m.ReadOnly {
				return
			}
		}
	}
	c.failf("container: no writable emptyDir mounted at /tmp")
}

func containerPort(c *checker, ctr *corev1.Container, name, configured string) int32 {
	for _, p := range ctr.Ports {
		if p.Name == name {
			if strconv.Itoa(int(p.ContainerPort)) != configured {
				c.failf("container: port %s is %d but the server is configured for %q", name, p.ContainerPort, configured)
			}
			return p.ContainerPort
		}
	}
	c.failf("container: no port named %s", name)
	return 0
}

func checkProbes(c *checker, ctr *corev1.Container, grpcPort int32, tls bool) {
	probes := map[string]*corev1.Probe{
		"liveness": ctr.LivenessProbe, "readiness": ctr.ReadinessProbe, "startup": ctr.StartupProbe,
	}
	for name, p := range probes {
		switch {
		case p == nil:
			c.failf("container: %s probe missing", name)
		case tls:
			// The kubelet's gRPC probe cannot speak TLS.
			if p.TCPSocket == nil || p.TCPSocket.Port.String() != "grpc" {
				c.failf("container: with TLS the %s probe must be a TCP check of the grpc port", name)
			}
		case p.GRPC == nil:
			c.failf("container: %s probe must be a native gRPC health probe", name)
		case p.GRPC.Port != grpcPort:
			c.failf("container: %s probe asks port %d, the gRPC port is %d", name, p.GRPC.Port, grpcPort)
		case name != "readiness" && (p.GRPC.Service == nil || *p.GRPC.Service == ""):
			// "" follows Redis: restarting replicas over a Redis outage heals nothing (ADR 0301).
			c.failf("container: the %s probe must ask a process-health service, not \"\"", name)
		}
	}
}

// The kubelet's budget must cover the preStop pause plus the server's drain, with room to spare.
func checkGrace(c *checker, spec *corev1.PodSpec, ctr *corev1.Container, drainMs string) {
	drain, err := strconv.Atoi(drainMs)
	if err != nil {
		c.failf("configmap: TETHER_DRAIN_TIMEOUT_MS %q is not an integer", drainMs)
		return
	}
	preStop := 0
	if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil {
		h := ctr.Lifecycle.PreStop
		if h.Exec == nil || len(h.Exec.Command) != 2 || h.Exec.Command[0] != "sleep" {
			c.failf("container: preStop must be [sleep N], got %+v", h)
			return
		}
		if preStop, err = strconv.Atoi(h.Exec.Command[1]); err != nil {
			c.failf("container: preStop sleep %q is not an integer", h.Exec.Command[1])
			return
		}
	}
	needed := int64(preStop) + int64((drain+999)/1000)
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds <= needed {
		c.failf("pod: terminationGracePeriodSeconds must exceed preStop %ds + drain %dms", preStop, drain)
	}
}

// Every env source resolves: the ConfigMap by name, the chart's Secret by name and key, and the
// store configuration is complete.
func checkEnv(c *checker, r *rendered, ctr *corev1.Container) {
	fromConfigMap := false
	for _, src := range ctr.EnvFrom {
		if src.ConfigMapRef != nil && src.ConfigMapRef.Name == r.configMap.Name {
			fromConfigMap = true
		}
	}
	if !fromConfigMap {
		c.failf("container: envFrom does not reference the ConfigMap %q", r.configMap.Name)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range ctr.Env {
		if _, dup := env[e.Name]; dup {
			c.failf("container: env %s set twice", e.Name)
		}
		env[e.Name] = e
		ref := e.ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || r.secret == nil || ref.SecretKeyRef.Name != r.secret.Name {
			continue
		}
		if _, ok := r.secret.Data[ref.SecretKeyRef.Key]; !ok {
			c.failf("container: env %s reads key %q the chart's Secret lacks", e.Name, ref.SecretKeyRef.Key)
		}
	}
	cfg := r.configMap.Data
	checkWebhookSecrets(c, cfg, env)
	switch provider := cfg["TETHER_PROVIDER"]; provider {
	case "scripted":
	case "openai", "anthropic":
		if _, ok := env["TETHER_"+strings.ToUpper(provider)+"_API_KEY"]; !ok {
			c.failf("provider %s: TETHER_%s_API_KEY is not set", provider, strings.ToUpper(provider))
		}
	default:
		c.failf("configmap: TETHER_PROVIDER %q", provider)
	}
	switch cfg["TETHER_STORE"] {
	case "redis":
		_, hasURL := env["TETHER_REDIS_URL"]
		given := 0
		for _, set := range []bool{hasURL, cfg["TETHER_REDIS_CLUSTER_NODES"] != "", cfg["TETHER_REDIS_SENTINELS"] != ""} {
			if set {
				given++
			}
		}
		if given != 1 {
			c.failf("store: want exactly one of TETHER_REDIS_URL, TETHER_REDIS_CLUSTER_NODES and TETHER_REDIS_SENTINELS")
		}
	case "memory":
		if r.deployment.Spec.Replicas == nil || *r.deployment.Spec.Replicas != 1 {
			c.failf("store: the memory store runs one replica only")
		}
	default:
		c.failf("configmap: TETHER_STORE %q", cfg["TETHER_STORE"])
	}
}

// Every declared webhook endpoint names a variable the container sets from a Secret, so its
// signing secret never passes through the ConfigMap or values.
func checkWebhookSecrets(c *checker, cfg map[string]string, env map[string]corev1.EnvVar) {
	raw, ok := cfg["TETHER_WEBHOOK_ENDPOINTS"]
	if !ok {
		return
	}
	var endpoints []struct {
		EndpointID string `json:"endpoint_id"`
		SecretEnv  string `json:"secret_env"`
	}
	if err := json.Unmarshal([]byte(raw), &endpoints); err != nil {
		c.failf("configmap: TETHER_WEBHOOK_ENDPOINTS is not a JSON list: %v", err)
		return
	}
	for _, e := range endpoints {
		v, set := env[e.SecretEnv]
		if !set || v.ValueFrom == nil || v.ValueFrom.SecretKeyRef == nil {
			c.failf("webhook endpoint %s: %s must be set from a secretKeyRef", e.EndpointID, e.SecretEnv)
		}
	}
}

func checkService(c *checker, r *rendered, podLabels labels.Set) {
	svc := r.service
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || len(svc.Spec.Selector) == 0 {
		c.failf("service: selector %v does not select the pods", svc.Spec.Selector)
	}
	grpc := servicePort(svc, "grpc")
	if grpc == nil || grpc.TargetPort.String() != "grpc" || grpc.AppProtocol == nil || *grpc.AppProtocol == "" {
		c.failf("service: needs port grpc → targetPort grpc with an appProtocol")
	}
	metrics := servicePort(svc, "metrics")
	if metrics == nil || metrics.TargetPort.String() != "metrics" {
		c.failf("service: needs port metrics → targetPort metrics")
	}
}

func servicePort(svc *corev1.Service, name string) *corev1.ServicePort {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == name {
			return &svc.Spec.Ports[i]
		}
	}
	return nil
}

func selects(c *checker, what string, sel *metav1.LabelSelector, set labels.Set) bool {
	if sel == nil {
		c.failf("%s: missing", what)
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() || !s.Matches(set) {
		c.failf("%s: %v does not select the pods", what, sel)
		return false
	}
	return true
}

// The dashboard ConfigMap carries the chart's dashboard as JSON Grafana can load: a title, a uid
// and panels, each querying Prometheus.
func checkDashboard(c *checker, cm *corev1.ConfigMap) {
	var board struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm.Data["tether.json"]), &board); err != nil {
		c.failf("dashboard: tether.json is not JSON: %v", err)
		return
	}
	queries := 0
	for _, p := range board.Panels {
		for _, t := range p.Targets {
			if strings.TrimSpace(t.Expr) != "" {
				queries++
			}
		}
	}
	if board.Title == "" || board.UID == "" || queries == 0 {
		c.failf("dashboard: want a title, a uid and panels with queries (got %q, %q, %d queries)", board.Title, board.UID, queries)
	}
}
