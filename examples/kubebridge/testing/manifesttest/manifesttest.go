// Package manifesttest deploys the hosts' shipped manifests in tests, as
// kubectl apply would on an empty cluster, and gives a ServiceAccount's
// in-cluster credentials to a container run from them. The kube-scheduler's
// and the vc-scheduler's integration tests share it.
package manifesttest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/internal/imagetest"
	"github.com/resfit/resfit/examples/kubebridge/planning"
)

// Read decodes every document of a manifest file but a
// CustomResourceDefinition (InstallRoomCRD installs the Room CRD).
func Read(t testing.TB, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err == nil && meta.Kind == "CustomResourceDefinition" {
			continue
		}
		obj, _, err := clientscheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
}

// Apply creates the objects as kubectl apply would on an empty cluster:
// the kinds the shipped manifests hold, besides workloads (ServiceAccounts,
// ConfigMaps, roles and their bindings).
func Apply(t *testing.T, ctx context.Context, cs kubernetes.Interface, objs []runtime.Object) {
	t.Helper()
	var err error
	for _, obj := range objs {
		switch o := obj.(type) {
		case *v1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *v1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("no apply for %T", obj)
		}
		if err != nil {
			t.Fatalf("applying %T: %v", obj, err)
		}
	}
}

// Account is the in-cluster credentials a pod running as the
// ServiceAccount namespace/name has: the API server at host, the CA that
// signed its serving certificate (caFile), a token the API server issues
// for the account (an hour), the namespace.
func Account(t *testing.T, ctx context.Context, cs kubernetes.Interface, host, caFile, namespace, name string) imagetest.Account {
	t.Helper()
	hour := int64(3600)
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", namespace, name, err)
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	return imagetest.Account{Server: host, CA: ca, Token: token.Status.Token, Namespace: namespace}
}

// ConfigMap is the one ConfigMap of a manifest file.
func ConfigMap(t testing.TB, path string) *v1.ConfigMap {
	t.Helper()
	for _, obj := range Read(t, path) {
		if cm, ok := obj.(*v1.ConfigMap); ok {
			return cm
		}
	}
	t.Fatalf("%s holds no ConfigMap", path)
	return nil
}

// InstallRoomCRD creates the Room CRD from the kube-scheduler host's
// shipped manifest (its first document; the others are its RBAC) on an
// apiserver that serves custom resources, and waits until rooms are
// served.
func InstallRoomCRD(t *testing.T, ctx context.Context, config *rest.Config, cs kubernetes.Interface, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n---\n")
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(first), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if crd.GetKind() != "CustomResourceDefinition" {
		t.Fatalf("%s begins with a %s, not the CRD", path, crd.GetKind())
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dynamic.NewForConfigOrDie(config).Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gv := planning.RoomResource.GroupVersion().String()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		return err == nil && len(list.APIResources) > 0, nil
	}); err != nil {
		t.Fatalf("rooms are not served: %v", err)
	}
}
