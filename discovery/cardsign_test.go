package discovery_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/payment"
)

// The canonical form leaves out signatures and empty members at every
// depth, keeps false and 0, and sorts members as RFC 8785 does.
func TestCanonicalAgentCard(t *testing.T) {
	got, err := discovery.CanonicalAgentCard([]byte(`{"name":"A","signatures":[{"protected":"x","signature":"y"}],"b":"",` +
		`"c":[],"d":{},"e":null,"f":{"g":[{},"",null],"h":false,"i":0},"a":[1,"",{"k":null}],"é":"1e2","n":1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":[1],"f":{"h":false,"i":0},"n":1.5,"name":"A","é":"1e2"}`
	if string(got) != want {
		t.Fatalf("canonical\n got %s\nwant %s", got, want)
	}
	if _, err := discovery.CanonicalAgentCard([]byte(`[1]`)); err == nil {
		t.Error("a JSON array is not a card")
	}
}

// A signed card carries a JWS whose protected header names the key and
// the JWKS, and whose signature verifies with the published key over the
// canonical card; a changed card does not verify.
func TestSignAgentCard(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	keys, err := payment.NewKeyring(priv)
	if err != nil {
		t.Fatal(err)
	}
	card := &discovery.AgentCard{Name: "A", Description: "B", Version: "1", DefaultInputModes: []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"}, Skills: []discovery.AgentSkill{},
		Capabilities: discovery.AgentCaps{Extensions: []discovery.AgentExtension{{URI: "https://example.com/ext"}}}}
	if err := discovery.SignAgentCard(card, keys, "https://api.example.com/.well-known/jwks.json"); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(card)
	if strings.Contains(string(raw), `"required"`) {
		t.Errorf("a false AgentExtension.required is written: %s", raw)
	}
	verify := func(raw []byte) bool {
		t.Helper()
		var c discovery.AgentCard
		if err := json.Unmarshal(raw, &c); err != nil || len(c.Signatures) != 1 {
			t.Fatalf("card %s: %v", raw, err)
		}
		var h struct{ Alg, Kid, Typ, JKU string }
		hb, _ := base64.RawURLEncoding.DecodeString(c.Signatures[0].Protected)
		if err := json.Unmarshal(hb, &h); err != nil || h.Alg != "EdDSA" || h.Typ != "JOSE" ||
			h.JKU != "https://api.example.com/.well-known/jwks.json" || h.Kid != keys.KeyID() {
			t.Fatalf("protected header %s", hb)
		}
		var pub ed25519.PublicKey
		for _, k := range keys.JWKS().Keys {
			if k.Kid == h.Kid {
				pub, _ = base64.RawURLEncoding.DecodeString(k.X)
			}
		}
		canonical, err := discovery.CanonicalAgentCard(raw)
		if err != nil {
			t.Fatal(err)
		}
		sig, _ := base64.RawURLEncoding.DecodeString(c.Signatures[0].Signature)
		return ed25519.Verify(pub, []byte(c.Signatures[0].Protected+"."+base64.RawURLEncoding.EncodeToString(canonical)), sig)
	}
	if !verify(raw) {
		t.Fatal("the signature does not verify")
	}
	if verify([]byte(strings.Replace(string(raw), `"description":"B"`, `"description":"C"`, 1))) {
		t.Error("a changed card verifies")
	}
}
