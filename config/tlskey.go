package config

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/youmark/pkcs8"
)

// decryptKey returns keyPEM with its private key decrypted when it is
// encrypted (PKCS#8 "ENCRYPTED PRIVATE KEY", as openssl and keytool write
// it, or a legacy PEM block with "Proc-Type: 4,ENCRYPTED"), with the
// passphrase of t.KeyPassword; an unencrypted key is returned as it is.
// A wrong passphrase is one line naming the key file.
func decryptKey(keyPEM []byte, t TLS, getenv func(string) string) ([]byte, error) {
	rest := keyPEM
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if t.KeyPassword.Set() {
				return nil, fmt.Errorf("TLS key %s is not encrypted, but a key passphrase is given (key_password_*): is it the right file?", t.KeyFile)
			}
			return keyPEM, nil
		}
		//nolint:staticcheck // legacy encrypted PEM (RFC 1423) is still what some tools write; it is read, never written
		legacy := x509.IsEncryptedPEMBlock(block)
		if block.Type != "ENCRYPTED PRIVATE KEY" && !legacy {
			continue
		}
		if !t.KeyPassword.Set() {
			return nil, fmt.Errorf("TLS key %s is encrypted: give its passphrase with key_password_env, key_password_file or key_password_command in the profile's tls table", t.KeyFile)
		}
		pass, _, err := t.KeyPassword.Resolve("TLS key passphrase", getenv)
		if err != nil {
			return nil, err
		}
		var der []byte
		typ := "PRIVATE KEY"
		if legacy {
			//nolint:staticcheck // see above
			der, err = x509.DecryptPEMBlock(block, []byte(pass))
			typ = block.Type
			// A wrong passphrase passes the padding check about once in
			// 256 tries (RFC 1423 has no integrity check): the key must parse.
			if err == nil && !parsesAsKey(der) {
				err = x509.IncorrectPasswordError
			}
		} else {
			var key any
			key, err = pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(pass))
			if err == nil {
				der, err = x509.MarshalPKCS8PrivateKey(key)
			}
		}
		if err != nil {
			return nil, errors.New("TLS key " + t.KeyFile + " cannot be decrypted: wrong passphrase, or a cipher kbatch does not know")
		}
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), nil
	}
}

// parsesAsKey reports whether der is a PKCS#1, SEC 1 (EC) or PKCS#8
// private key.
func parsesAsKey(der []byte) bool {
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParseECPrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParsePKCS8PrivateKey(der)
	return err == nil
}
