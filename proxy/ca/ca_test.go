package ca

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadCreatesThenReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agentvcr")
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{KeyFile: 0o600, CertFile: 0o644} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v); want %v", name, info.Mode().Perm(), err, want)
		}
	}
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v; want 0700", info.Mode().Perm())
	}
	b, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Cert.Equal(b.Cert) {
		t.Fatal("a second Load made a new CA")
	}
	if !a.Cert.IsCA || a.Cert.PublicKeyAlgorithm != x509.ECDSA {
		t.Fatalf("root: IsCA %v, algorithm %v", a.Cert.IsCA, a.Cert.PublicKeyAlgorithm)
	}
}

func TestLoadAtOnceMakesOneCA(t *testing.T) {
	// Proxies started together on a new machine all load the CA that is
	// on disk, made once, never one of their own.
	dir := filepath.Join(t.TempDir(), "agentvcr")
	const n = 8
	got := make([]*Authority, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = Load(dir) })
	}
	wg.Wait()
	onDisk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range got {
		if errs[i] != nil {
			t.Fatalf("Load %d: %v", i, errs[i])
		}
		if !a.Cert.Equal(onDisk.Cert) || !a.key.PublicKey.Equal(onDisk.key.Public()) {
			t.Errorf("Load %d holds a CA that is not the one on disk", i)
		}
	}
}

func TestLeafVerifiesAgainstRoot(t *testing.T) {
	a, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.Cert)
	for _, host := range []string{"api.anthropic.com", "127.0.0.1", "localhost:8443"} {
		leaf, err := a.Leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		name, _, err := net.SplitHostPort(host)
		if err != nil {
			name = host
		}
		if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
		again, _ := a.Leaf(host)
		if again != leaf {
			t.Errorf("%s: leaf not cached", host)
		}
	}
}

func TestLeavesConcurrently(t *testing.T) {
	a, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	certs := make([]*tls.Certificate, 16)
	for i := range certs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			certs[i], _ = a.Leaf("slack.com")
		}()
	}
	wg.Wait()
	for _, c := range certs[1:] {
		if c != certs[0] {
			t.Fatal("concurrent callers got different leaves for one host")
		}
	}
}

func TestTLSServerWithLeaf(t *testing.T) {
	a, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	go srv.Serve(tls.NewListener(ln, a.TLSConfig("127.0.0.1")))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(a.Cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get("https://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestLoadRefusesBadFiles(t *testing.T) {
	tests := []struct {
		name   string
		damage func(dir string)
		says   string
	}{
		{"key readable by others", func(dir string) { os.Chmod(filepath.Join(dir, KeyFile), 0o644) }, "chmod 600"},
		{"corrupt certificate", func(dir string) { os.WriteFile(filepath.Join(dir, CertFile), []byte("junk"), 0o644) }, CertFile},
		{"corrupt key", func(dir string) { os.WriteFile(filepath.Join(dir, KeyFile), []byte("junk"), 0o600) }, KeyFile},
		{"key of another CA", func(dir string) {
			other := t.TempDir()
			if _, err := Load(other); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(other, KeyFile))
			os.WriteFile(filepath.Join(dir, KeyFile), b, 0o600)
		}, "does not belong"},
		{"certificate missing", func(dir string) { os.Remove(filepath.Join(dir, CertFile)) }, CertFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := Load(dir); err != nil {
				t.Fatal(err)
			}
			tt.damage(dir)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v; want it to say %q", err, tt.says)
			}
		})
	}
}

func TestWriteBundle(t *testing.T) {
	a, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(t.TempDir(), "system.pem")
	other, _ := Load(t.TempDir())
	os.WriteFile(system, other.PEM(), 0o644)
	t.Setenv("SSL_CERT_FILE", system)
	path, err := a.WriteBundle()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) || strings.Count(string(b), "BEGIN CERTIFICATE") != 2 {
		t.Fatalf("bundle holds %d certificates; want the system's and ours", strings.Count(string(b), "BEGIN CERTIFICATE"))
	}
	t.Setenv("SSL_CERT_FILE", filepath.Join(t.TempDir(), "none.pem"))
	if _, err := a.WriteBundle(); err == nil || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
		t.Fatalf("no system bundle: %v", err)
	}
}
