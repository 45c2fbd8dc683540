package chat

import "testing"

// TestChanges: subscribers of a conversation are signalled without
// blocking the writer, others are not, and cancel unsubscribes for good.
func TestChanges(t *testing.T) {
	t.Parallel()
	s := &Service{subs: map[int64]map[chan struct{}]struct{}{}}
	a, cancelA := s.Changes(1)
	b, cancelB := s.Changes(1)
	other, cancelOther := s.Changes(2)
	defer cancelOther()
	s.notify(1)
	s.notify(1) // the buffer holds one; a second signal never blocks
	for name, ch := range map[string]<-chan struct{}{"a": a, "b": b} {
		select {
		case <-ch:
		default:
			t.Errorf("%s was not signalled", name)
		}
		select {
		case <-ch:
			t.Errorf("%s got two signals from a buffer of one", name)
		default:
		}
	}
	select {
	case <-other:
		t.Error("another conversation's subscriber was signalled")
	default:
	}
	cancelA()
	cancelA()
	s.notify(1)
	select {
	case <-a:
		t.Error("a cancelled subscriber was signalled")
	default:
	}
	<-b
	cancelB()
	if n := s.subscribers(); n != 1 {
		t.Errorf("%d subscribers left, want 1", n)
	}
	if _, ok := s.subs[1]; ok {
		t.Error("an empty subscriber set was kept")
	}
}
