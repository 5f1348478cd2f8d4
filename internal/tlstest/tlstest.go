// Package tlstest makes a throwaway certificate authority and a server
// certificate for loopback addresses, written as PEM files, for tests and
// the fleet simulation of the gateway's TLS listener.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the PEM files of a CA and a server certificate.
type Files struct {
	CA, Cert, Key string
}

// Write makes a CA and a certificate for 127.0.0.1, ::1 and localhost
// signed by it, valid for a day, under dir.
func Write(dir string) (Files, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dome test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return Files{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Files{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "dome gateway"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Files{}, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Files{}, err
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "gateway.pem"), Key: filepath.Join(dir, "gateway.key")}
	for _, w := range []struct {
		path, typ string
		der       []byte
	}{{f.CA, "CERTIFICATE", caDER}, {f.Cert, "CERTIFICATE", der}, {f.Key, "EC PRIVATE KEY", kb}} {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(&pem.Block{Type: w.typ, Bytes: w.der}), 0o600); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}
