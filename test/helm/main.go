// Command helmcheck decodes a rendered Helm manifest stream strictly into Kubernetes API types,
// so a misspelt or misplaced field fails, then checks the invariants the Tether chart promises.
//
//	helmcheck -kinds ConfigMap,Deployment,... rendered.yaml
//
// Exit status 0: every document decoded and every check held; 1: otherwise (reasons on stderr).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// newObject maps apiVersion/kind to an empty typed object; a kind the chart does not render is
// an error, so a typo in apiVersion or kind fails too.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + "/" + kind {
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1/Secret":
		return &corev1.Secret{}, nil
	case "v1/Service":
		return &corev1.Service{}, nil
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, nil
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, nil
	}
	return nil, fmt.Errorf("unexpected apiVersion %q kind %q", apiVersion, kind)
}

// rendered holds the decoded objects of one stream, one of each kind (the chart renders no more).
type rendered struct {
	configMap      *corev1.ConfigMap
	secret         *corev1.Secret
	service        *corev1.Service
	serviceAccount *corev1.ServiceAccount
	deployment     *appsv1.Deployment
	pdb            *policyv1.PodDisruptionBudget
	hpa            *autoscalingv2.HorizontalPodAutoscaler
	serviceMonitor *monitoringv1.ServiceMonitor
	dashboard      *corev1.ConfigMap
	kinds          []string
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func decode(stream []byte) (*rendered, []error) {
	var errs []error
	r := &rendered{}
	for i, doc := range docSeparator.Split(string(stream), -1) {
		if isBlank(doc) {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			continue
		}
		obj, err := newObject(meta.APIVersion, meta.Kind)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			continue
		}
		// UnmarshalStrict rejects unknown fields and duplicate keys.
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", i, meta.Kind, err))
			continue
		}
		if err := r.add(meta.Kind, obj); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
		}
	}
	return r, errs
}

func (r *rendered) add(kind string, obj any) error {
	// The Grafana dashboard is a ConfigMap of its own kind here: it never feeds the server's env.
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Labels["grafana_dashboard"] == "1" {
		kind = "GrafanaDashboard"
		obj = nil
		r.dashboard = cm
	}
	for _, k := range r.kinds {
		if k == kind {
			return fmt.Errorf("a second %s", kind)
		}
	}
	r.kinds = append(r.kinds, kind)
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		r.configMap = o
	case *corev1.Secret:
		r.secret = o
	case *corev1.Service:
		r.service = o
	case *corev1.ServiceAccount:
		r.serviceAccount = o
	case *appsv1.Deployment:
		r.deployment = o
	case *policyv1.PodDisruptionBudget:
		r.pdb = o
	case *autoscalingv2.HorizontalPodAutoscaler:
		r.hpa = o
	case *monitoringv1.ServiceMonitor:
		r.serviceMonitor = o
	}
	return nil
}

func isBlank(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

func main() {
	kinds := flag.String("kinds", "", "comma-separated kinds the stream must hold, exactly")
	decodeOnly := flag.Bool("decode-only", false, "stop after strict decoding")
	envOut := flag.String("env-out", "", "write the server container's environment here as JSON")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: helmcheck [-kinds K1,K2] [-decode-only] rendered.yaml")
		os.Exit(2)
	}
	stream, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r, errs := decode(stream)
	if len(errs) == 0 && !*decodeOnly {
		errs = append(errs, checkKinds(r, *kinds)...)
		errs = append(errs, checkInvariants(r)...)
	}
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %v\n", flag.Arg(0), e)
		}
		os.Exit(1)
	}
	if *envOut != "" {
		if err := writeEnv(r, *envOut); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sort.Strings(r.kinds)
	fmt.Printf("%s: ok (%s)\n", flag.Arg(0), strings.Join(r.kinds, ", "))
}

func checkKinds(r *rendered, want string) []error {
	if want == "" {
		return nil
	}
	wanted := strings.Split(want, ",")
	sort.Strings(wanted)
	got := append([]string(nil), r.kinds...)
	sort.Strings(got)
	if strings.Join(wanted, ",") != strings.Join(got, ",") {
		return []error{fmt.Errorf("kinds: want [%s], rendered [%s]", strings.Join(wanted, ","), strings.Join(got, ","))}
	}
	return nil
}

// writeEnv resolves what the server process would see: the ConfigMap, then env entries, with
// values from the chart's own Secret decoded and those from other Secrets left as
// "secret:<name>/<key>" for the caller to fill in.
func writeEnv(r *rendered, path string) error {
	env := map[string]string{}
	for k, v := range r.configMap.Data {
		env[k] = v
	}
	for _, e := range r.deployment.Spec.Template.Spec.Containers[0].Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if r.secret != nil && ref.Name == r.secret.Name {
				env[e.Name] = string(r.secret.Data[ref.Key])
			} else {
				env[e.Name] = "secret:" + ref.Name + "/" + ref.Key
			}
		}
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
