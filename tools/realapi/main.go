// Command fleet-realapi-server is a real Kubernetes API server serving
// CustomResourceDefinitions and custom resources (k8s.io/apiextensions-apiserver
// on the generic apiserver machinery, backed by etcd). kubectl-fleet's tests
// hold kube-sandbox and the project's CRDs against it.
//
// It differs from upstream's standalone apiextensions-apiserver main in three
// ways. The first two are needed for kubectl and kube-rs clients to work
// against it alone:
//
//  1. /apis discovery is served. Upstream turns it off because inside
//     kube-apiserver the aggregator serves discovery for every group.
//  2. The generic config gets a v2 OpenAPIConfig with the package's generated
//     definitions, as kube-apiserver has. Without it the CRD OpenAPI
//     controllers never start and client-side `kubectl apply` of a custom
//     resource fails with "failed to download openapi".
//
// The third lets it run behind kube-sandbox as the apiextensions-apiserver
// runs inside kube-apiserver (docs/realapi.md, "kube-sandbox in front"):
//
//  3. --authentication-kubeconfig is optional. Without it the server looks
//     up nothing and reviews no bearer token: it authenticates only what
//     its flags name (--client-ca-file, and the front proxy's client
//     certificate with --requestheader-client-ca-file, whose
//     X-Remote-User/-Group/-Extra-* headers carry the identity kube-sandbox
//     authenticated). Every other request is anonymous, and authorization
//     (--authorization-kubeconfig: SubjectAccessReview) decides.
//
// Flags are the upstream ones (genericoptions.RecommendedOptions et al.).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/cli"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(newCommand(ctx)))
}

func newCommand(ctx context.Context) *cobra.Command {
	o := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	// Difference 3: no in-cluster fallback when --authentication-kubeconfig
	// is not given.
	o.RecommendedOptions.Authentication.RemoteKubeConfigFileOptional = true
	cmd := &cobra.Command{
		Use:          "fleet-realapi-server",
		Short:        "Real Kubernetes API server for CRDs and custom resources (test reference for kubectl-fleet)",
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ServerRunOptions.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	return cmd
}

func run(ctx context.Context, o *options.CustomResourceDefinitionsServerOptions) error {
	config, err := o.Config()
	if err != nil {
		return fmt.Errorf("building server config: %w", err)
	}

	// Difference 2: the v2 OpenAPI config, named and filtered exactly like the
	// v3 one upstream's options already set.
	definitions := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme, scheme.Scheme)
	config.GenericConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	config.GenericConfig.OpenAPIConfig.Info.Title = "Kubernetes"
	config.GenericConfig.OpenAPIV3Config.Info.Title = "Kubernetes"

	completed := config.Complete()
	// Difference 1: Complete() switches discovery off; switch it back on so
	// /apis and /apis/<group> list the CRD groups for clients.
	completed.GenericConfig.EnableDiscovery = true

	server, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return fmt.Errorf("creating server: %w", err)
	}
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
