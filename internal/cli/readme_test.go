package cli_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/cli"
)

// readmeConfig is the README's t3agent.yaml example, as printed.
func readmeConfig(t *testing.T) string {
	t.Helper()
	return markdownYAML(t, "README.md", "Write `t3agent.yaml`")
}

// TestReadmeConfigServes: the README's example, with only the site
// pointed at a real (demo) site through the environment as the README
// says, serves on first start and creates the master key it names,
// readable by its owner only; a key others may read is refused with one
// sentence.
func TestReadmeConfigServes(t *testing.T) {
	t.Parallel()
	demo := filepath.Join(demoDir(t), cli.DefaultDataDir)
	work := t.TempDir()
	writeFile(t, work, "t3agent.yaml", readmeConfig(t))
	env := []string{"T3AGENT_SITE_DSN=sqlite:" + filepath.Join(demo, "site.db"), "T3AGENT_SITE_ROOT=" + filepath.Join(demo, "site")}
	key := filepath.Join(work, "data", "master.key")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := cli.NewRootCommand(cli.Env{Stdout: io.Discard, Stderr: pw, Environ: env, WorkDir: work})
		root.SetArgs([]string{"serve", "--listen", "127.0.0.1:0", "--no-worker"})
		err := root.ExecuteContext(ctx)
		_ = pw.CloseWithError(io.EOF)
		done <- err
	}()
	url := ""
	var logs strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if m := regexp.MustCompile(`msg=serving url=(\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if url == "" {
		t.Fatalf("serve never announced its URL: %v\n%s", <-done, logs.String())
	}
	if !strings.Contains(logs.String(), "master key created") {
		t.Errorf("the key's creation was not logged:\n%s", logs.String())
	}
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d", resp.StatusCode)
	}
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("master key after the first start: %v, mode %v", err, st.Mode())
	}

	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, context.Background(), work, env, "serve", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), key+" may be read by group or others (mode 0644); run chmod 600") || strings.Contains(err.Error(), "\n") {
		t.Errorf("serve with a world-readable key: err = %v, want one sentence telling to chmod it", err)
	}
}
