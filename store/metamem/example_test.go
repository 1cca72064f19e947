package metamem_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/store/metamem"
)

// A receipt keyring generated once and kept for the process: the second
// load finds the first one's key.
func Example() {
	ctx := context.Background()
	meta := &metamem.Store{}
	a, err := payment.LoadKeyring(ctx, meta, "")
	if err != nil {
		log.Fatal(err)
	}
	b, err := payment.LoadKeyring(ctx, meta, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.KeyID() == b.KeyID())
	// Output: true
}
