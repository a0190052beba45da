package ipc

import "context"

// Transport names how a request reached the helper. The rules differ: over the Unix socket
// (owner-only) a request may name files on the helper's disk; over the web transport (TCP on
// loopback, bearer token) it may not, and scans arrive as uploads.
type Transport string

const (
	TransportUnix Transport = "unix"
	TransportWeb  Transport = "web"
)

type transportKey struct{}

// ContextWithTransport returns a context that carries the transport a request came over. The
// server sets it on every connection; daemon tests use it to call a Service as either
// transport would.
func ContextWithTransport(ctx context.Context, t Transport) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

// TransportFrom reports the transport of the request ctx belongs to. A context without one is
// treated as the web transport, the stricter of the two, so that a Service reached some other
// way never grants path access by accident.
func TransportFrom(ctx context.Context) Transport {
	if t, ok := ctx.Value(transportKey{}).(Transport); ok {
		return t
	}
	return TransportWeb
}
