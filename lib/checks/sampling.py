"""Ground truth for the approximations: the exact posterior by NUTS (:func:`sample_posterior`),
by quadrature (:func:`quadrature_posterior`, ``M <= 3``), and the Monte Carlo predictive
(:func:`mc_predictive`). The comparisons with the Laplace fit, the cubic correction and the
importance-sampling estimate of the evidence are computed in the chapter itself.

Derived in the book chapter "How good are the approximations?". Book equations implemented
here: ``eq-ev-logf`` (the target ``log f(w) = Psi(w) - (M/2) log(2 pi s2)``, whose integral is
the evidence ``Z``) and ``eq-gt-whiten`` (``w = w_MAP + L^{-T} z``).

References: Hoffman & Gelman (2014), NUTS, as NumPyro implements it; Gelman et al. (2013),
*Bayesian Data Analysis*, chapter 11 (split R-hat, effective sample size); Liu & Pierce (1994)
(Gauss-Hermite quadrature centred and scaled by the Laplace fit).

Importing this module turns on JAX's 64-bit mode (``jax_enable_x64``). With fixed PRNG keys the
draws repeat exactly on one machine; across machines, sampled figures agree within their MCSE.
"""
from __future__ import annotations

import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import expit, logsumexp

from lib._cache import code_digest as _code_digest, disk_cache
from lib.laplace import LaplacePosterior, prior_quadratic
from lib.likelihood import _log_sigmoid
from lib._validate import (_real_array, as_design, as_design_labels, as_matrix, flag,
                           fraction, instance, int_at_least, positive_scalar)

try:  # the sampler's framework; the quadrature needs only NumPy
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    with warnings.catch_warnings():     # tqdm.auto's warning without ipywidgets (no bars here)
        warnings.filterwarnings("ignore", message="IProgress not found")
        import numpyro.diagnostics
        import numpyro.infer
except ImportError:  # pragma: no cover - jax and numpyro are pinned in requirements.lock
    jax = None


def _problem(Phi, y, s2):
    return (*as_design_labels(Phi, y, ("Phi", "y")), positive_scalar(s2, "s2"))


def _laplace(posterior, M: int, name: str = "posterior") -> LaplacePosterior:
    if instance(posterior, name, LaplacePosterior).n_weights != M:
        raise ValueError(f"{name} has {posterior.n_weights} weights, Phi has {M} columns")
    return posterior


#: Most Gauss-Hermite nodes per axis: numpy's rule is accurate to about 350 (its weights
#: underflow and ``log_z`` turns NaN from about 375).
MAX_NODES_PER_AXIS = 300
#: Most nodes in all (``n_nodes ** M``): the joint is evaluated at every node at once.
MAX_NODES = 2**20


def _draws(draws) -> np.ndarray:
    draws = _real_array(draws, "draws").astype(float)
    if draws.ndim != 3 or min(draws.shape) == 0:
        raise ValueError(f"draws must have shape (chains, draws, M), got shape {draws.shape}")
    if draws.shape[1] < 4:
        raise ValueError(f"draws must hold at least 4 draws per chain, got {draws.shape[1]}")
    if not np.all(np.isfinite(draws)):
        raise ValueError("draws must contain only finite values")
    return draws


def log_joint(W, Phi, y, s2) -> np.ndarray:
    """``log f(w) = L(w) + log N(w | 0, s2 I)`` for a batch of weight vectors (NumPy).

    Parameters
    ----------
    W : array_like, shape (S, M)
        Weight vectors, one per row.
    Phi : array_like, shape (N, M)
    y : array_like, shape (N,)
        Labels 0/1.
    s2 : float
        Prior variance.

    Returns
    -------
    ndarray, shape (S,)
        ``Psi(w) - (M/2) log(2 pi s2)``; ``Z`` is its integral over ``w``.
    """
    Phi, y, s2 = _problem(Phi, y, s2)
    W = as_design(W, "W", n_cols=Phi.shape[1])
    return _log_joint(W, Phi, 2.0 * y - 1.0, s2)


def _log_joint(W, Phi, sign, s2, chunk: int = 2048):
    M = Phi.shape[1]
    out = np.empty(W.shape[0])
    for i in range(0, W.shape[0], chunk):
        Wc = W[i : i + chunk]
        a = Wc @ Phi.T                                          # (S, N) activations
        # Psi for each row: lib's log-sigmoid and prior term, batched over the S draws
        out[i : i + chunk] = _log_sigmoid(a * sign).sum(axis=1)
        out[i : i + chunk] += prior_quadratic(np.einsum("sm,sm->s", Wc, Wc), s2)
    return out - 0.5 * M * np.log(2.0 * np.pi * s2)             # book eq. eq-ev-logf


def log_posterior_fn(Phi, y, s2):
    """The log posterior ``Psi(w) = L(w) - w.w / (2 s2)`` as a JAX function of ``w``.

    The model density in the sampler's framework: JAX traces, differentiates and compiles it.

    Parameters
    ----------
    Phi, y, s2
        As in :func:`log_joint`.

    Returns
    -------
    callable
        ``psi(w)``, ``w`` a JAX or NumPy array of shape (M,), returns a scalar JAX array.
    """
    Phi, y, s2 = _problem(Phi, y, s2)
    P, sign = jnp.asarray(Phi), jnp.asarray(2.0 * y - 1.0)

    def psi(w):
        # Book eq. map-logpost, log sigma(t) = -log(1 + exp(-t)) with t = (2 y - 1) a
        return -jnp.sum(jnp.logaddexp(0.0, -sign * (P @ w))) - w @ w / (2.0 * s2)

    return psi


@dataclass(frozen=True)
class PosteriorSamples:
    """Draws of the weights from NUTS, with the sampler's own record.

    Attributes
    ----------
    draws : ndarray, shape (chains, draws, M)
        Weight vectors after warm-up.
    diverging : ndarray of bool, shape (chains, draws)
        Transitions NUTS flagged as divergent.
    num_steps : ndarray of int, shape (chains, draws)
        Leapfrog steps (gradient evaluations) per draw.
    preconditioned : bool
        Whether the sampler ran in the Laplace-whitened coordinates.
    """

    draws: np.ndarray
    diverging: np.ndarray
    num_steps: np.ndarray
    preconditioned: bool

    @property
    def n_draws(self) -> int:
        """Draws per chain."""
        return self.draws.shape[1]

    @property
    def flat(self) -> np.ndarray:
        """All draws, chains concatenated, shape (chains * draws, M)."""
        return self.draws.reshape(-1, self.draws.shape[-1])

    def diagnostics(self) -> dict[str, float]:
        """Largest split R-hat, smallest ESS (over weights; Gelman et al. 2013, ch. 11, as in
        Stan), divergences, mean leapfrog steps."""
        return {
            "max R-hat": float(np.max(numpyro.diagnostics.split_gelman_rubin(self.draws))),
            "min ESS": float(_ess(self.draws).min()),
            "divergences": int(self.diverging.sum()),
            "steps per draw": float(self.num_steps.mean()),
        }


@contextmanager
def _compilation_cache_in(folder):
    """JAX's persistent compilation cache in ``folder`` (programs over 0.5 s to compile: the
    NUTS loops) for the duration of the block, then JAX's settings as they were."""
    from jax.experimental.compilation_cache import compilation_cache

    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")
    saved = {name: getattr(jax.config, name) for name in names}
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    compilation_cache.reset_cache()            # the cache is set up at the next compilation
    try:
        yield
    finally:
        for name, value in saved.items():
            jax.config.update(name, value)
        compilation_cache.reset_cache()


@contextmanager
def _each_program_compiled_once():
    """NumPyro's sequential chains jit one sampling loop per chain (about 2.5 s of compilation
    each); a persistent cache in a temporary folder lets the next chains load the first one's
    executable (the same program: the same draws). A cache the caller set up is used as is."""
    if jax.config.jax_compilation_cache_dir:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="blc-jax-") as folder, _compilation_cache_in(folder):
        yield


def sample_posterior(Phi, y, s2, *, precondition=None, num_warmup: int = 500,
                     num_draws: int = 500, num_chains: int = 2, seed: int = 0,
                     target_accept: float = 0.8, init_scale: float = 2.0,
                     cache: bool = False) -> PosteriorSamples:
    """Draw from the exact posterior ``p(w | y) ∝ exp(Psi(w))`` with NumPyro's NUTS.

    Chains run one after the other on the CPU, from starting points drawn at random (an
    over-dispersed ``N(0, init_scale^2 I)`` in the sampler's coordinates, centred on the MAP when
    preconditioned), with step size and diagonal mass matrix adapted during warm-up. The chains'
    sampling loop is compiled once (:func:`_each_program_compiled_once`).

    Parameters
    ----------
    Phi, y, s2
        As in :func:`log_joint`.
    precondition : LaplacePosterior, optional
        Sample ``z`` with ``w = w_MAP + L^{-T} z`` (exact: an affine change of variables).
    num_warmup, num_draws, num_chains : int
        Warm-up iterations and kept draws per chain, and the number of chains (>= 2 for R-hat).
    seed : int
        Seed of the JAX PRNG key.
    target_accept : float
        NUTS's target acceptance probability, in (0, 1).
    init_scale : float
        Standard deviation of the random starting points.
    cache : bool
        Keep the draws on disk (:class:`joblib.Memory` under ``<BLC_CACHE_DIR>/references``, as
        :func:`lib.fastgrid.evidence_grid` keeps its tables) and return them from there when the
        same run is asked again (by this or another chapter). The key: the arguments and
        :func:`code_digest` (the code, the packages' versions and Python's). A folder that
        cannot be made is skipped.

    Returns
    -------
    PosteriorSamples
    """
    Phi, y, s2 = _problem(Phi, y, s2)
    M = Phi.shape[1]
    num_warmup, num_draws, num_chains = _sampler_settings(num_warmup, num_draws, num_chains)
    seed = int_at_least(seed, "seed", 0)
    target_accept = fraction(target_accept, "target_accept", open_interval=True)
    init_scale = positive_scalar(init_scale, "init_scale")
    if precondition is None:
        shift, T = np.zeros(M), np.eye(M)
    else:
        post = _laplace(precondition, M, "precondition")
        shift = post.w_map
        T = solve_triangular(post.chol, np.eye(M), lower=True).T    # L^{-T}
    run = disk_cache("references").cache(_sample) if flag(cache, "cache") else _sample
    return run(Phi, y, s2, shift, T, precondition is not None, num_warmup, num_draws, num_chains,
               seed, float(target_accept), init_scale, code_digest() if cache else "")


def _sample(Phi, y, s2, shift, T, preconditioned, num_warmup, num_draws, num_chains, seed,
            target_accept, init_scale, code) -> PosteriorSamples:
    """:func:`sample_posterior` on checked arguments, ``w = shift + T z`` (``code``: part of the
    cache's key only)."""
    psi = log_posterior_fn(Phi, y, s2)
    shift_j, T_j = jnp.asarray(shift), jnp.asarray(T)

    def potential(z):
        # Book eq. eq-gt-whiten: w = w_MAP + L^{-T} z, affine, so its Jacobian is a constant and
        # the target stays the exact posterior
        return -psi(shift_j + T_j @ z)

    key_init, key_run = jax.random.split(jax.random.PRNGKey(seed))
    z0 = init_scale * jax.random.normal(key_init, (num_chains, shift.shape[0]), dtype=jnp.float64)
    # NUTS (Hoffman & Gelman 2014): step size and diagonal mass matrix adapted in warm-up
    mcmc = numpyro.infer.MCMC(
        numpyro.infer.NUTS(potential_fn=potential, target_accept_prob=target_accept),
        num_warmup=num_warmup, num_samples=num_draws, num_chains=num_chains,
        chain_method="sequential", progress_bar=False)
    with _each_program_compiled_once():
        mcmc.run(key_run, init_params=z0, extra_fields=("diverging", "num_steps"))
    z = np.asarray(mcmc.get_samples(group_by_chain=True))            # (C, S, M)
    extra = mcmc.get_extra_fields(group_by_chain=True)
    return PosteriorSamples(draws=shift + z @ T.T,
                            diverging=np.asarray(extra["diverging"], dtype=bool),
                            num_steps=np.asarray(extra["num_steps"], dtype=int),
                            preconditioned=preconditioned)


def code_digest() -> str:
    """SHA-256 of the code the draws are computed by (``lib``'s top-level modules and
    :mod:`lib.checks`), of numpy's, scipy's, jax's, jaxlib's and numpyro's versions and of
    Python's: part of :func:`sample_posterior`'s cache key. A chapter run on another Python
    samples again."""
    return _code_digest(("*.py", "checks/*.py"), ("numpy", "scipy", "jax", "jaxlib", "numpyro"))


def _sampler_settings(num_warmup, num_draws, num_chains) -> tuple[int, int, int]:
    """The checked run lengths of :func:`sample_posterior`."""
    return (int_at_least(num_warmup, "num_warmup", 1), int_at_least(num_draws, "num_draws", 4),
            int_at_least(num_chains, "num_chains", 2))


def _ess(x: np.ndarray) -> np.ndarray:
    return np.asarray(numpyro.diagnostics.effective_sample_size(x))


def sample_moments(draws) -> dict[str, np.ndarray]:
    """Per-column mean and standard deviation of MCMC draws, with their Monte Carlo errors.

    ``draws`` (chains, draws, K): of the weights, or of any function of them (activations).
    Returns a dict of arrays of shape (K,): ``mean``, ``sd``, ``mcse_mean = sd / sqrt(ESS)``
    and ``mcse_sd``, from the ESS of the squared deviations by the delta method (Gelman et al.
    2013, ch. 11; NumPyro's ESS, as in Stan).
    """
    draws = _draws(draws)
    mean = draws.mean(axis=(0, 1))
    sq = (draws - mean) ** 2
    sd = np.sqrt(sq.mean(axis=(0, 1)))
    mcse_var = sq.reshape(-1, mean.shape[0]).std(axis=0) / np.sqrt(_ess(sq))
    return {"mean": mean, "sd": sd, "mcse_mean": sd / np.sqrt(_ess(draws)),
            "mcse_sd": mcse_var / (2 * sd)}


def mc_predictive(draws, Phi, *, chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo predictive ``P(y=1 | phi) = E_p[sigma(phi.w)]`` from MCMC draws, with its MCSE.

    Parameters
    ----------
    draws : array_like, shape (chains, draws, M)
    Phi : array_like, shape (K, M)
        Designs of the inputs to predict at.
    chunk : int
        Inputs per block (memory: ``chunk * chains * draws`` floats).

    Returns
    -------
    p : ndarray, shape (K,)
        Average of ``sigma(phi_k.w)`` over the draws.
    mcse : ndarray, shape (K,)
        Its Monte Carlo standard error, ``sd / sqrt(ESS)`` with the ESS of ``sigma(phi_k.w)``.
    """
    draws = _draws(draws)
    C, S, M = draws.shape
    Phi = as_design(Phi, "Phi", n_cols=M)
    chunk = int_at_least(chunk, "chunk", 1)
    p, mcse = np.empty(Phi.shape[0]), np.empty(Phi.shape[0])
    for i in range(0, Phi.shape[0], chunk):
        s = expit(draws @ Phi[i : i + chunk].T)                   # (C, S, k)
        p[i : i + chunk] = s.mean(axis=(0, 1))
        sd = s.reshape(C * S, -1).std(axis=0)
        mcse[i : i + chunk] = np.where(sd > 0, sd / np.sqrt(np.maximum(_ess(s), 1.0)), 0.0)
    return p, mcse


@dataclass(frozen=True)
class QuadraturePosterior:
    """The exact posterior on a tensor Gauss-Hermite grid (``M <= 3`` weights).

    Attributes
    ----------
    nodes : ndarray, shape (K, M)
        Weight vectors of the grid, ``w = w_MAP + L^{-T} z``.
    weights : ndarray, shape (K,)
        Posterior probabilities of the nodes (sum to 1).
    log_z : float
        ``log Z``.
    kl_laplace : float
        ``KL(p || q)``, ``q`` the Laplace Gaussian, in nats.
    """

    nodes: np.ndarray
    weights: np.ndarray
    log_z: float
    kl_laplace: float

    @property
    def mean(self) -> np.ndarray:
        """Posterior mean, shape (M,)."""
        return self.weights @ self.nodes

    @property
    def cov(self) -> np.ndarray:
        """Posterior covariance, shape (M, M)."""
        d = self.nodes - self.mean
        return (d.T * self.weights) @ d

    @property
    def sd(self) -> np.ndarray:
        """Posterior standard deviations, shape (M,)."""
        return np.sqrt(np.diag(self.cov))

    @property
    def skew(self) -> np.ndarray:
        """Standardised third central moments of the marginals, shape (M,)."""
        d = self.nodes - self.mean
        return (self.weights @ d**3) / self.sd**3

    def predictive(self, Phi) -> np.ndarray:
        """``E_p[sigma(phi.w)]`` at each row of ``Phi`` (shape (K*, M)), shape (K*,)."""
        Phi = as_matrix(Phi, "Phi", n_cols=self.nodes.shape[1])
        return expit(Phi @ self.nodes.T) @ self.weights


def quadrature_posterior(Phi, y, s2, posterior: LaplacePosterior, *,
                         n_nodes: int = 40) -> QuadraturePosterior:
    """The exact posterior by tensor Gauss-Hermite quadrature in Laplace-whitened coordinates.

    With ``w = w_MAP + L^{-T} z`` (``A = L L^T``), ``Z = |L|^{-1} int f(w(z)) dz``, and
    ``f(w(z)) = exp(h(z)) exp(-|z|^2 / 2)`` with ``h`` smooth (constant if the posterior were
    the Laplace Gaussian). Gauss-Hermite nodes ``z_i`` and weights ``omega_i`` for the weight
    ``exp(-z^2/2)``, ``n_nodes`` per axis, give ``Z ~= |L|^{-1} sum_i omega_i exp(h(z_i))`` and
    the posterior as point masses ``∝ omega_i exp(h(z_i))`` at ``w(z_i)``.

    Parameters
    ----------
    Phi, y, s2
        As in :func:`log_joint`, with ``M <= 3``.
    posterior : LaplacePosterior
        The Laplace fit of the same problem (the grid's centre and scales).
    n_nodes : int
        Nodes per axis (``n_nodes ** M`` in all).

    Returns
    -------
    QuadraturePosterior
    """
    Phi, y, s2 = _problem(Phi, y, s2)
    M = Phi.shape[1]
    if M > 3:
        raise ValueError(f"quadrature_posterior needs M <= 3 weights (n_nodes**M nodes), got M = {M}")
    post = _laplace(posterior, M)
    n_nodes = int_at_least(n_nodes, "n_nodes", 2)
    if n_nodes > MAX_NODES_PER_AXIS or n_nodes**M > MAX_NODES:
        raise ValueError(f"n_nodes must be at most {MAX_NODES_PER_AXIS} (numpy's Gauss-Hermite rule "
                         f"loses accuracy beyond) with n_nodes**M at most {MAX_NODES} (memory), "
                         f"got n_nodes = {n_nodes} for M = {M}")
    # Gauss-Hermite rule centred and scaled by the Laplace fit (Liu & Pierce 1994)
    z1, om1 = np.polynomial.hermite_e.hermegauss(n_nodes)        # weight exp(-z^2/2)
    Z = np.stack(np.meshgrid(*([z1] * M), indexing="ij"), axis=-1).reshape(-1, M)
    log_om = np.sum(np.log(np.stack(np.meshgrid(*([om1] * M), indexing="ij"), -1)), -1).ravel()
    T = solve_triangular(post.chol, np.eye(M), lower=True).T      # L^{-T}
    W = post.w_map + Z @ T.T                                      # book eq. eq-gt-whiten
    # h(z) = log f(w(z)) + |z|^2 / 2, so that f(w(z)) = exp(h(z)) exp(-|z|^2 / 2)
    h = _log_joint(W, Phi, 2.0 * y - 1.0, s2) + 0.5 * np.sum(Z**2, axis=1)
    log_mass = h + log_om
    log_zz = logsumexp(log_mass)                                  # log int f(w(z)) dz
    weights = np.exp(log_mass - log_zz)
    # log p(z) - log q(z) = h(z) - log_zz + (M/2) log(2 pi), q(z) = N(0, I)
    kl = float(weights @ (h - log_zz) + 0.5 * M * np.log(2.0 * np.pi))
    return QuadraturePosterior(nodes=W, weights=weights, kl_laplace=kl,
                               log_z=float(log_zz - 0.5 * post.log_det_precision))   # log |L|
