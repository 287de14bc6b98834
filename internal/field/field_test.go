package field

import (
	"errors"
	"fmt"
	"testing"
)

func TestRename(t *testing.T) {
	names := map[string]string{"p.Config.Save": "--save", "p.Config.SaveEvery": "--save-every", "p.Config.Epochs": "--epochs"}
	err := fmt.Errorf("run: %w", Errorf("p.Config.SaveEvery", "%d needs p.Config.Save", 5))
	msg, ok := Rename(err, names)
	if !ok || msg != "run: --save-every: 5 needs --save" {
		t.Fatalf("Rename = %q, %v", msg, ok)
	}
	var fe *Error
	if !errors.As(err, &fe) || fe.Field != "p.Config.SaveEvery" {
		t.Fatalf("errors.As: %v", fe)
	}
	if msg, ok := Rename(errors.New("p.Config.Epochs too large"), names); ok || msg != "--epochs too large" {
		t.Fatalf("plain error: %q, %v", msg, ok)
	}
	base := errors.New("disk full")
	if w := Wrap("p.Config.Save", base); !errors.Is(w, base) || w.Error() != "p.Config.Save: disk full" {
		t.Fatalf("Wrap = %v", w)
	}
	if Wrap("x", nil) != nil {
		t.Fatal("Wrap(nil) != nil")
	}
}
