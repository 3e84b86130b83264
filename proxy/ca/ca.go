// Package ca is the certificate authority of the agentvcr proxy: an ECDSA
// P-256 root made on first use in the user's config dir, and leaf
// certificates for each host the proxy intercepts, cached.
//
// The root's private key never leaves the config dir (mode 0600, in a
// 0700 dir) and must never be trusted system-wide: trust it only in the
// child process under test (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE). The proxy
// never uses goproxy's built-in CA, whose key is public.
package ca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/filelock"
)

// File names in the CA's directory.
const (
	CertFile = "ca.pem"
	KeyFile  = "ca-key.pem"
)

// Authority signs leaf certificates with its root.
type Authority struct {
	// Cert is the root certificate; CertPath the PEM file that holds it.
	Cert     *x509.Certificate
	CertPath string

	key    *ecdsa.PrivateKey
	mu     sync.Mutex
	leaves map[string]*tls.Certificate
	now    func() time.Time
}

// DefaultDir returns the directory of the user's agentvcr CA:
// $XDG_CONFIG_HOME/agentvcr, or the platform's user config dir.
func DefaultDir() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("ca: no config dir: %w", err)
		}
	}
	return filepath.Join(dir, "agentvcr"), nil
}

// Load returns the CA in dir, making it on first use. A key file readable
// by others is refused: it would let anyone who can read it intercept the
// traffic of every process that trusts the CA.
func Load(dir string) (*Authority, error) {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	switch {
	case errors.Is(certErr, os.ErrNotExist) || errors.Is(keyErr, os.ErrNotExist):
		return createOnce(dir)
	case certErr != nil:
		return nil, fmt.Errorf("ca: %w", certErr)
	case keyErr != nil:
		return nil, fmt.Errorf("ca: %w", keyErr)
	}
	info, err := os.Stat(keyPath)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("ca: %s is readable by others (mode %v): chmod 600 it, or delete %s and %s to make a new CA",
			keyPath, info.Mode().Perm(), certPath, keyPath)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("ca: %s: %w", certPath, err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("ca: %s: %w", keyPath, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("ca: %s does not belong to %s: delete both to make a new CA", keyPath, certPath)
	}
	return &Authority{Cert: cert, CertPath: certPath, key: key, leaves: map[string]*tls.Certificate{}, now: time.Now}, nil
}

// createOnce makes the CA in dir unless another process made it first.
// Proxies started at once on a new machine (one per test worker) would
// otherwise each make one, and each sign for a key that another's
// certificate file does not hold.
func createOnce(dir string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	unlock, err := filelock.Lock(filepath.Join(dir, ".ca.lock"), time.Minute)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	defer unlock()
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return Load(dir) // made while this one waited
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
		return create(dir)
	case certErr != nil:
		return nil, fmt.Errorf("ca: %w", certErr)
	default:
		return nil, fmt.Errorf("ca: %w", keyErr)
	}
}

func create(dir string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "agentvcr local test CA", Organization: []string{"agentvcr"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	// The key first: a certificate without its key is useless, a key
	// without its certificate is made again.
	if err := writePEM(keyPath, 0o600, "EC PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	if err := writePEM(certPath, 0o644, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	return &Authority{Cert: cert, CertPath: certPath, key: key, leaves: map[string]*tls.Certificate{}, now: time.Now}, nil
}

func writePEM(path string, mode os.FileMode, typ string, der []byte) error {
	err := atomicfile.Write(path, mode, func(w io.Writer) error {
		return pem.Encode(w, &pem.Block{Type: typ, Bytes: der})
	})
	if err != nil {
		return fmt.Errorf("ca: %w", err)
	}
	return nil
}

func parseCert(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, errors.New("not a CA certificate")
	}
	return cert, nil
}

func parseKey(b []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "EC PRIVATE KEY" {
		return nil, errors.New("not a PEM EC private key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	return n, nil
}

// PEM returns the root certificate, PEM-encoded.
func (a *Authority) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Cert.Raw})
}

// Leaf returns a certificate for host (a name or an IP address), signed by
// the root, made on first use and cached while it is valid.
func (a *Authority) Leaf(host string) (*tls.Certificate, error) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if c, ok := a.leaves[host]; ok && now.Before(c.Leaf.NotAfter.Add(-time.Hour)) {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: leaf for %s: %w", host, err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("ca: leaf for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: leaf for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.Cert.Raw}, PrivateKey: key, Leaf: leaf}
	a.leaves[host] = c
	return c, nil
}

// TLSConfig returns a server configuration that presents a leaf for the
// name the client asks for, or for host when the client sends none.
func (a *Authority) TLSConfig(host string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			return a.Leaf(name)
		},
	}
}

// BundleFile names the file in the CA's directory that holds the system's
// roots and this CA's, for SSL_CERT_FILE and the like.
const BundleFile = "bundle.pem"

// systemRoots are where Linux distributions and macOS keep the system's
// trusted roots as PEM.
var systemRoots = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",             // openSUSE
	"/etc/ssl/cert.pem",                  // Alpine, macOS
}

// WriteBundle writes, beside the root, a PEM bundle of the system's roots
// ($SSL_CERT_FILE if set) and the root, and returns its path. A child
// process given it as SSL_CERT_FILE trusts the proxy and still every real
// server, without anything installed system-wide.
func (a *Authority) WriteBundle() (string, error) {
	var system []byte
	candidates := systemRoots
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		candidates = []string{f}
	}
	for _, f := range candidates {
		if b, err := os.ReadFile(f); err == nil {
			system = b
			break
		}
	}
	if system == nil {
		return "", fmt.Errorf("ca: no system root bundle found (looked in %v); set SSL_CERT_FILE to one", candidates)
	}
	path := filepath.Join(filepath.Dir(a.CertPath), BundleFile)
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if _, err := w.Write(system); err != nil {
			return err
		}
		if len(system) > 0 && system[len(system)-1] != '\n' {
			if _, err := w.Write([]byte("\n")); err != nil {
				return err
			}
		}
		_, err := w.Write(a.PEM())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("ca: %w", err)
	}
	return path, nil
}

// Open loads the CA in dir, or in DefaultDir when dir is empty.
func Open(dir string) (*Authority, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	return Load(dir)
}
