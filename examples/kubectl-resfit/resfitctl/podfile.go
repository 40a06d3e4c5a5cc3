package resfitctl

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/resfit/resfit/examples/kubebridge"
)

// ReadPods reads pod manifests from a YAML or JSON file: one pod, several
// documents, or a List. The documents are read as kubectl reads them
// (apimachinery's YAML-or-JSON decoder), and each pod's requests as the
// API server defaults them on create (kubebridge.DefaultRequests: a limit
// with no request is requested); an error names the document.
func ReadPods(path string) ([]*v1.Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pod file: %v", err)
	}
	defer f.Close()
	r, err := kubebridge.LimitedReader("pod file "+path, f, kubebridge.MaxPodFileBytes)
	if err != nil {
		return nil, err
	}
	return readPods(path, r)
}

// readPods is ReadPods over the file's content.
func readPods(path string, r *kubebridge.Limited) ([]*v1.Pod, error) {
	next := documents(r)
	var pods []*v1.Pod
	for i := 1; ; i++ {
		doc, err := next()
		if err == io.EOF {
			break
		} else if refused := r.Refused(); refused != nil {
			return nil, refused
		} else if err != nil {
			return nil, fmt.Errorf("pod file %s, document %d: not JSON or YAML (%v)", path, i, firstLine(err))
		}
		got, err := podsOf(doc)
		if err != nil {
			return nil, fmt.Errorf("pod file %s, document %d%v", path, i, err)
		}
		pods = append(pods, got...)
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("pod file %s holds no pods", path)
	}
	seen := map[string]bool{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		if seen[key] {
			return nil, fmt.Errorf("pod file %s: pod %s appears twice; a pod's namespace and name are its own", path, key)
		}
		seen[key] = true
	}
	return pods, nil
}

// documents splits a stream into its documents, each as JSON, as kubectl
// reads a file (apimachinery's YAML-or-JSON guess): JSON objects one after
// another, or YAML documents between "---" lines, each converted as the
// API server reads YAML (yamlToJSON: a key given twice is an error). A
// document of nothing but comments is JSON null. io.EOF ends it.
func documents(r io.Reader) func() (json.RawMessage, error) {
	stream, _, isJSON := kyaml.GuessJSONStream(r, 4096)
	if isJSON {
		decoder := json.NewDecoder(stream)
		return func() (json.RawMessage, error) {
			var doc json.RawMessage
			err := decoder.Decode(&doc)
			return doc, err
		}
	}
	reader := kyaml.NewYAMLReader(bufio.NewReader(stream))
	return func() (json.RawMessage, error) {
		doc, err := reader.Read()
		if err != nil {
			return nil, err
		}
		return yamlToJSON(doc)
	}
}

// podsOf reads one document: a pod, a List of pods, or nothing. An error
// starts with the place in the document (", items[1]") and a colon.
func podsOf(doc json.RawMessage) ([]*v1.Pod, error) {
	if len(doc) == 0 || string(doc) == "null" {
		return nil, nil
	}
	var meta metav1.TypeMeta
	if err := json.Unmarshal(doc, &meta); err != nil {
		return nil, fmt.Errorf(": %v", firstLine(err))
	}
	if !strings.HasSuffix(meta.Kind, "List") {
		p, err := readPod(doc)
		if err != nil {
			return nil, fmt.Errorf(": %v", err)
		}
		return []*v1.Pod{p}, nil
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return nil, fmt.Errorf(": %v", firstLine(err))
	}
	var pods []*v1.Pod
	for j, item := range list.Items {
		p, err := readPod(item)
		if err != nil {
			return nil, fmt.Errorf(", items[%d]: %v", j, err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// readPod reads one pod manifest (JSON); a pod without a namespace is in
// the default one.
func readPod(js []byte) (*v1.Pod, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return nil, errors.New(firstLine(err))
	}
	if meta.Kind != "Pod" && meta.Kind != "" {
		return nil, fmt.Errorf("a %s, not a Pod", meta.Kind)
	}
	p := &v1.Pod{}
	if err := strictUnmarshal(js, p, ""); err != nil {
		return nil, err
	}
	// Its requests as the API server defaults them, then what resfit
	// refuses of them (a quantity past what it counts, a fraction of an
	// extended resource), as written in the file.
	p = kubebridge.DefaultRequests(p)
	if _, err := kubebridge.PodOf(p); err != nil {
		return nil, asWritten(err, js)
	}
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	return p, nil
}

func kindOrNothing(kind string) string {
	if kind == "" {
		return "document without kind"
	}
	return kind
}
